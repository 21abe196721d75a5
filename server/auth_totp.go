package server

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"image/png"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/opsagent/opsagent/server/auth"
	"github.com/opsagent/opsagent/store"
)

// TOTP parameters: the ones every authenticator app understands.
const (
	totpPeriod   = 30
	totpDigits   = otp.DigitsSix
	totpSetupTTL = 10 * time.Minute
)

// MfaTotpSetupResponse starts TOTP enrolment. Nothing is stored: setup_token
// is the secret sealed (AES-256-GCM, key derived from the server key, bound to
// the caller, expiring) and must be echoed back to /api/auth/mfa/totp/verify.
type MfaTotpSetupResponse struct {
	Secret     string    `json:"secret"`      // base32, for typing into an app by hand
	OtpauthURL string    `json:"otpauth_url"` // otpauth://totp/...
	QRCode     string    `json:"qr_code"`     // data:image/png;base64,... of otpauth_url
	SetupToken string    `json:"setup_token"`
	ExpiresAt  time.Time `json:"expires_at"`
}

// MfaTotpVerifyRequest finishes TOTP enrolment.
type MfaTotpVerifyRequest struct {
	SetupToken string `json:"setup_token" validate:"required,min=1,max=1024"`
	Code       string `json:"code" validate:"required,min=6,max=10"`
	Name       string `json:"name,omitempty" validate:"max=120"`
}

// seal encrypts plaintext with a key derived for purpose, bound to aad.
func (s *Server) seal(purpose string, plaintext, aad []byte) []byte {
	gcm := s.aead(purpose)
	nonce := auth.RandomBytes(gcm.NonceSize())
	return gcm.Seal(nonce, nonce, plaintext, aad)
}

// open reverses seal; any tampering, a wrong purpose or a wrong aad fails.
func (s *Server) open(purpose string, blob, aad []byte) ([]byte, error) {
	gcm := s.aead(purpose)
	if len(blob) < gcm.NonceSize()+gcm.Overhead() {
		return nil, errors.New("sealed value too short")
	}
	return gcm.Open(nil, blob[:gcm.NonceSize()], blob[gcm.NonceSize():], aad)
}

func (s *Server) aead(purpose string) cipher.AEAD {
	block, err := aes.NewCipher(s.signer.Key(purpose)) // 32 bytes: AES-256
	if err != nil {
		panic("aead: " + err.Error())
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		panic("aead: " + err.Error())
	}
	return gcm
}

type totpSetupClaims struct {
	User    string `json:"u"`
	Secret  string `json:"s"`
	Expires int64  `json:"e"`
}

func errSetupToken() error {
	return badRequest("invalid_setup_token", "The TOTP setup token is invalid or expired; start the setup again")
}

// handleTOTPSetup is POST /api/auth/mfa/totp/setup.
func (m *mfaFeature) handleTOTPSetup(c *Ctx) error {
	key, err := totp.Generate(totp.GenerateOpts{Issuer: "opsagent", AccountName: c.ID.Email, Period: totpPeriod, Digits: totpDigits, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		return err
	}
	img, err := key.Image(256, 256)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return err
	}
	exp := m.s.Now().Add(totpSetupTTL)
	plain, _ := json.Marshal(totpSetupClaims{User: c.ID.UserID, Secret: key.Secret(), Expires: exp.Unix()})
	blob := m.s.seal("totp-setup", plain, []byte("totp-setup:"+c.ID.UserID))
	return c.JSON(200, MfaTotpSetupResponse{Secret: key.Secret(), OtpauthURL: key.URL(),
		QRCode:     "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes()),
		SetupToken: base64.RawURLEncoding.EncodeToString(blob), ExpiresAt: exp.Truncate(time.Second)})
}

// handleTOTPVerify is POST /api/auth/mfa/totp/verify: opens the echoed setup
// token, checks a code and only then stores the method, sealed at rest (key
// "totp-secret", bound to user and method id). The accepted step is stored
// so the enrolment code cannot be replayed at login.
func (m *mfaFeature) handleTOTPVerify(c *Ctx) error {
	var req MfaTotpVerifyRequest
	if err := c.Bind(&req); err != nil {
		return err
	}
	blob, err := base64.RawURLEncoding.DecodeString(req.SetupToken)
	if err != nil {
		return errSetupToken()
	}
	plain, err := m.s.open("totp-setup", blob, []byte("totp-setup:"+c.ID.UserID))
	if err != nil {
		c.Audit("auth.mfa_setup_tampered", "denied", "user", c.ID.UserID, nil)
		return errSetupToken()
	}
	var st totpSetupClaims
	if json.Unmarshal(plain, &st) != nil || st.User != c.ID.UserID || m.s.Now().Unix() > st.Expires {
		return errSetupToken()
	}
	if ok, retry := m.perUser.Allow(c.ID.UserID); !ok {
		return &RateLimitError{RetryAfter: retry}
	}
	step, ok := matchTOTP(st.Secret, req.Code, m.s.Now())
	if !ok {
		return wrongFactor("Incorrect code; check the clock of the device")
	}
	m.perUser.Reset(c.ID.UserID)
	id := store.NewID()
	name := strings.TrimSpace(req.Name)
	if name == "" {
		name = "Authenticator app"
	}
	method := &store.MFAMethod{ID: id, UserID: c.ID.UserID, Kind: store.MFATOTP, Name: name, LastStep: step,
		Secret: m.s.seal("totp-secret", []byte(st.Secret), totpAAD(c.ID.UserID, id))}
	return m.enrol(c, method)
}

func totpAAD(userID, methodID string) []byte { return []byte("totp:" + userID + ":" + methodID) }

// matchTOTP finds the step whose code equals code, looking one step either
// side of now (clock skew); anything further off is rejected.
func matchTOTP(secret, code string, now time.Time) (int64, bool) {
	code = strings.TrimSpace(code)
	if len(code) != totpDigits.Length() {
		return 0, false
	}
	step := now.Unix() / totpPeriod
	for _, st := range []int64{step - 1, step, step + 1} {
		want, err := totp.GenerateCodeCustom(secret, time.Unix(st*totpPeriod, 0), totp.ValidateOpts{Period: totpPeriod, Digits: totpDigits, Algorithm: otp.AlgorithmSHA1})
		if err != nil {
			return 0, false
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			return st, true
		}
	}
	return 0, false
}

// checkTOTP accepts a code of any of the user's TOTP methods whose step is
// later than the last one accepted: the same code twice, or an older step
// after a newer one, fails.
func (m *mfaFeature) checkTOTP(ctx context.Context, userID, code string) error {
	methods, err := m.s.db.FindMFAMethods(ctx, userID, store.MFATOTP)
	if err != nil {
		return err
	}
	for _, meth := range methods {
		secret, err := m.s.open("totp-secret", meth.Secret, totpAAD(userID, meth.ID))
		if err != nil {
			loggerFrom(ctx).ErrorContext(ctx, "stored totp secret does not open", "method_id", meth.ID)
			continue
		}
		step, ok := matchTOTP(string(secret), code, m.s.Now())
		if !ok {
			continue
		}
		if step <= meth.LastStep {
			return wrongFactor("This code was already used; wait for the next one")
		}
		won, err := m.s.db.AdvanceTOTPStep(ctx, meth.ID, step)
		if err != nil {
			return err
		}
		if !won {
			return wrongFactor("This code was already used; wait for the next one")
		}
		return nil
	}
	return wrongFactor("Incorrect code")
}
