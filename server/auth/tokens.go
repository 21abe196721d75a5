package auth

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func init() {
	// Microsecond issue times, so a token minted just after logout-all in the
	// same second is not mistaken for one minted before it.
	jwt.TimePrecision = time.Microsecond
}

// Token types. A token of one type is never accepted where another is expected.
const (
	TypeAccess = "access"
	TypeMFA    = "mfa"
)

// Claims of every signed token this server issues.
type Claims struct {
	jwt.RegisteredClaims
	Type    string `json:"typ"`
	Session string `json:"sid,omitempty"`
	Org     string `json:"org,omitempty"`
}

// Signer issues and verifies HS256 tokens with the key from the data directory.
type Signer struct {
	key    []byte
	issuer string
	parser *jwt.Parser
	// Now is the clock tokens are checked against; tests move it.
	Now func() time.Time

	// verified remembers the claims of tokens whose signature checked out, so
	// the same access token presented on every request of its 15 minutes is
	// parsed once (parsing was a tenth of an authenticated request's CPU).
	// Times are checked again on every hit; revocation is the caller's check
	// and never cached. Bounded: cleared whole when full.
	mu       sync.RWMutex
	verified map[string]Claims
}

// verifiedCap bounds the cache of verified tokens (about 1 KB each).
const verifiedCap = 4096

// leeway is the clock skew allowed on exp, nbf and iat.
const leeway = 5 * time.Second

// NewSigner returns a signer for key (at least 32 bytes).
func NewSigner(key []byte) (*Signer, error) {
	if len(key) < 32 {
		return nil, errors.New("auth: signing key shorter than 32 bytes")
	}
	s := &Signer{key: key, issuer: "opsagent", Now: time.Now, verified: map[string]Claims{}}
	s.parser = jwt.NewParser(jwt.WithValidMethods([]string{"HS256"}), jwt.WithIssuer("opsagent"),
		jwt.WithExpirationRequired(), jwt.WithIssuedAt(), jwt.WithLeeway(leeway),
		jwt.WithTimeFunc(func() time.Time { return s.Now() }))
	return s, nil
}

// Key returns a key derived from the signing key for another purpose, so one
// generated secret serves several uses without any two sharing a key.
func (s *Signer) Key(purpose string) []byte { return MAC(s.key, []byte(purpose)) }

// Issue signs claims of the given type for subject, valid for ttl from now.
func (s *Signer) Issue(typ, subject, session, org string, now time.Time, ttl time.Duration) (string, *Claims, error) {
	c := &Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    s.issuer,
			Subject:   subject,
			ID:        RandomToken(16),
			IssuedAt:  jwt.NewNumericDate(now),
			NotBefore: jwt.NewNumericDate(now.Add(-time.Second)),
			ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
		},
		Type:    typ,
		Session: session,
		Org:     org,
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(s.key)
	return tok, c, err
}

// ErrInvalidToken covers every reason a token is refused; callers never learn which.
var ErrInvalidToken = errors.New("invalid token")

// Verify parses and checks a token of the wanted type.
func (s *Signer) Verify(token, wantType string) (*Claims, error) {
	s.mu.RLock()
	c, hit := s.verified[token]
	s.mu.RUnlock()
	if hit {
		if !s.timesValid(&c) {
			return nil, ErrInvalidToken
		}
	} else {
		_, err := s.parser.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return s.key, nil })
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidToken, err)
		}
		s.mu.Lock()
		if len(s.verified) >= verifiedCap {
			clear(s.verified)
		}
		s.verified[token] = c
		s.mu.Unlock()
	}
	if c.Type != wantType || c.Subject == "" || c.ID == "" {
		return nil, ErrInvalidToken
	}
	return &c, nil
}

// timesValid repeats the parser's time checks for a cached token.
func (s *Signer) timesValid(c *Claims) bool {
	now := s.Now()
	if c.ExpiresAt == nil || !now.Before(c.ExpiresAt.Add(leeway)) {
		return false
	}
	if c.NotBefore != nil && now.Add(leeway).Before(c.NotBefore.Time) {
		return false
	}
	return c.IssuedAt == nil || !now.Add(leeway).Before(c.IssuedAt.Time)
}

// RefreshToken derives the refresh token of a session generation: HMAC of the
// session id, its salt and the generation. The server stores only its hash yet
// can hand the same token again to a concurrent tab during the grace window.
func (s *Signer) RefreshToken(sessionID string, salt []byte, generation int) string {
	g := make([]byte, 8)
	binary.BigEndian.PutUint64(g, uint64(generation))
	mac := MAC(s.Key("refresh-token"), []byte(sessionID), salt, g)
	return sessionID + "." + base64.RawURLEncoding.EncodeToString(mac)
}

// SessionOfRefresh returns the session id a refresh token names (unverified).
func SessionOfRefresh(token string) (string, bool) {
	id, _, ok := strings.Cut(token, ".")
	return id, ok && len(id) == 36
}
