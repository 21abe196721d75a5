package server_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/argon2"

	"github.com/opsagent/opsagent/store"
)

// A hash stored with older argon2id parameters (an account from before they
// changed) still signs in, and is redone with the current parameters after
// that sign-in, with the same password and without ending other sessions.
func TestLoginUpgradesAHashMadeWithOlderParameters(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.register("ada@example.com")
	other := env.newClient()
	other.must(200, "POST", "/api/auth/login", map[string]any{"email": "ada@example.com", "password": pw})

	salt := make([]byte, 16)
	rand.Read(salt)
	old := fmt.Sprintf("$argon2id$v=%d$m=19456,t=2,p=1$%s$%s", argon2.Version, base64.RawStdEncoding.EncodeToString(salt),
		base64.RawStdEncoding.EncodeToString(argon2.IDKey([]byte(pw), salt, 2, 19456, 1, 32)))
	ctx := context.Background()
	setHash := func(h string) {
		t.Helper()
		err := env.DB.Write(ctx, func(tx *store.Tx) error {
			_, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = ? WHERE email = ?`, h, "ada@example.com")
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	stored := func() string {
		t.Helper()
		u, err := env.DB.FindUserByEmail(ctx, "ada@example.com")
		if err != nil {
			t.Fatal(err)
		}
		return u.PasswordHash
	}
	setHash(old)

	wrong := env.newClient().do("POST", "/api/auth/login", map[string]any{"email": "ada@example.com", "password": "not it"})
	if wrong.Status != 401 {
		t.Fatalf("wrong password against the old hash: %d", wrong.Status)
	}
	env.newClient().must(200, "POST", "/api/auth/login", map[string]any{"email": "ada@example.com", "password": pw})
	deadline := time.Now().Add(20 * time.Second)
	for stored() == old && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	now := stored()
	if now == old || !strings.HasPrefix(now, "$argon2id$v=19$m=12288,t=3,p=1$") {
		t.Fatalf("stored hash after sign-in: %q, want one with the current parameters", now)
	}
	env.newClient().must(200, "POST", "/api/auth/login", map[string]any{"email": "ada@example.com", "password": pw})
	if stored() != now {
		t.Fatal("a hash with the current parameters was redone")
	}
	other.must(200, "GET", "/api/auth/me", nil) // the upgrade ended no session
}
