package server

import (
	"context"
	"crypto/rand"
	"strings"
	"time"

	"github.com/opsagent/opsagent/server/auth"
	"github.com/opsagent/opsagent/store"
)

// Backup codes: 10 codes of 10 characters from an alphabet without look-alikes
// (28 symbols, about 48 bits each), shown as XXXXX-XXXXX. Stored as HMACs under
// a key derived from the server key, so a copied database alone does not let
// anyone test guesses offline.
const (
	backupCodeCount    = 10
	backupCodeLen      = 10
	backupCodeAlphabet = "BCDFGHJKLMNPQRSTVWXZ23456789"
)

// BackupCodesResponse carries fresh backup codes; they are shown only once.
type BackupCodesResponse struct {
	Codes     []string  `json:"codes"`
	CreatedAt time.Time `json:"created_at"`
}

// randomCode draws n symbols of alphabet uniformly (rejection sampling).
func randomCode(alphabet string, n int) string {
	out := make([]byte, 0, n)
	buf := make([]byte, 2*n)
	limit := 256 - 256%len(alphabet)
	for len(out) < n {
		if _, err := rand.Read(buf); err != nil {
			panic("crypto/rand failed: " + err.Error())
		}
		for _, b := range buf {
			if int(b) < limit && len(out) < n {
				out = append(out, alphabet[int(b)%len(alphabet)])
			}
		}
	}
	return string(out)
}

// normalizeCode uppercases and drops separators and spaces people type.
func normalizeCode(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '-' || r == ' ' || r == '\t':
			return -1
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		}
		return r
	}, s)
}

func (m *mfaFeature) backupHash(userID, code string) []byte {
	return auth.MAC(m.s.signer.Key("backup-code"), []byte(userID), []byte(normalizeCode(code)))
}

// newBackupCodes draws a set and returns the codes to show and their hashes.
func (m *mfaFeature) newBackupCodes(userID string) ([]string, [][]byte) {
	codes := make([]string, backupCodeCount)
	hashes := make([][]byte, backupCodeCount)
	for i := range codes {
		raw := randomCode(backupCodeAlphabet, backupCodeLen)
		codes[i] = raw[:5] + "-" + raw[5:]
		hashes[i] = m.backupHash(userID, raw)
	}
	return codes, hashes
}

// useBackupCode spends one code (store: one conditional UPDATE).
func (m *mfaFeature) useBackupCode(ctx context.Context, userID, code string) error {
	norm := normalizeCode(code)
	if len(norm) != backupCodeLen {
		return wrongFactor("Incorrect backup code")
	}
	ok, err := m.s.db.UseBackupCode(ctx, userID, m.backupHash(userID, norm))
	if err != nil {
		return err
	}
	if !ok {
		return wrongFactor("Incorrect or already used backup code")
	}
	return nil
}

// enrol stores a new TOTP or WebAuthn method; the first one also brings a
// fresh set of backup codes, returned once.
func (m *mfaFeature) enrol(c *Ctx, method *store.MFAMethod) error {
	ctx := c.Context()
	codes, hashes := m.newBackupCodes(method.UserID)
	first, err := m.s.db.EnrolMFA(ctx, method, hashes)
	if err != nil {
		return err
	}
	if !first {
		codes = nil // the set made with the first factor stays; these were never stored
	}
	c.Audit("auth.mfa_enrolled", "success", "mfa_method", method.ID, map[string]any{"kind": method.Kind})
	return c.JSON(200, MfaEnrollResponse{Method: methodOut(method), BackupCodes: codes})
}

// handleRegenerateBackupCodes is POST /api/auth/mfa/backup-codes/regenerate:
// a current factor (TOTP, security key or an unused backup code) must be
// proven in the body; the old set stops working at once.
func (m *mfaFeature) handleRegenerateBackupCodes(c *Ctx) error {
	var req MfaChallengeRequest
	if err := c.Bind(&req); err != nil {
		return err
	}
	if err := m.verifyFactor(c, c.ID.UserID, &req); err != nil {
		return err
	}
	ctx := c.Context()
	codes, hashes := m.newBackupCodes(c.ID.UserID)
	created, err := m.s.db.ReplaceBackupCodes(ctx, c.ID.UserID, hashes)
	if err != nil {
		return err
	}
	c.Audit("auth.mfa_backup_codes_regenerated", "success", "user", c.ID.UserID, nil)
	return c.JSON(200, BackupCodesResponse{Codes: codes, CreatedAt: created})
}
