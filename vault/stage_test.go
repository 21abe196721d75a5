package vault

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"
)

// A staged key decrypts but does not encrypt until promoted, and the mark
// survives a reopen (another server reading the copied keyring).
func TestStageThenPromote(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vault")
	v := openVault(t, dir, "")
	first := v.CurrentKeyID()
	if _, err := v.Promote(); !errors.Is(err, ErrNoStagedKey) {
		t.Fatalf("promote without a staged key: %v", err)
	}
	ct, _, err := v.Encrypt([]byte("db password"))
	if err != nil {
		t.Fatal(err)
	}
	staged, err := v.Stage()
	if err != nil {
		t.Fatal(err)
	}
	other := openVault(t, dir, "")
	if other.CurrentKeyID() != first || !slices.Equal(other.StagedKeyIDs(), []string{staged}) {
		t.Fatalf("after stage: current %s, staged %v", other.CurrentKeyID(), other.StagedKeyIDs())
	}
	if _, kid, _ := other.Encrypt([]byte("x")); kid != first {
		t.Fatalf("a staged key encrypted: %s", kid)
	}
	promoted, err := v.Promote()
	if err != nil || promoted != staged {
		t.Fatalf("promote: %s %v", promoted, err)
	}
	ct2, kid, err := v.Encrypt([]byte("api token"))
	if err != nil || kid != staged {
		t.Fatalf("after promote: key %s %v", kid, err)
	}
	// The server that only had the staged copy reads what the promoted key wrote.
	if pt, err := other.Decrypt(ct2); err != nil || string(pt) != "api token" {
		t.Fatalf("staged copy decrypts: %q %v", pt, err)
	}
	again := openVault(t, dir, "")
	if again.CurrentKeyID() != staged || len(again.StagedKeyIDs()) != 0 || !slices.Equal(again.KeyIDs(), []string{first, staged}) {
		t.Fatalf("after promote: keys %v current %s staged %v", again.KeyIDs(), again.CurrentKeyID(), again.StagedKeyIDs())
	}
	if pt, err := again.Decrypt(ct); err != nil || string(pt) != "db password" {
		t.Fatalf("old ciphertext: %q %v", pt, err)
	}
}
