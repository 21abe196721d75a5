package vault

import (
	"bytes"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"filippo.io/age"
)

// testScryptLogN keeps passphrase wrapping fast in tests; Open uses 18.
const testScryptLogN = 10

func openVault(t testing.TB, dir, passphrase string) *Vault {
	t.Helper()
	v, err := open(dir, passphrase, slog.New(slog.DiscardHandler), testScryptLogN)
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	return v
}

// dirSnapshot records every file under dir with its mode and bytes.
func dirSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		entry := fi.Mode().String()
		if !d.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			entry += " " + string(b)
		}
		snap[p] = entry
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func TestRoundTrip(t *testing.T) {
	v := openVault(t, filepath.Join(t.TempDir(), "vault"), "")
	for _, pt := range [][]byte{
		{},
		[]byte("sk-live-0123456789abcdef"),
		bytes.Repeat([]byte{0, 1, 2, 0xff}, 40000), // several age chunks
		bytes.Repeat([]byte("x"), MaxPlaintextSize),
	} {
		ct, id, err := v.Encrypt(pt)
		if err != nil {
			t.Fatalf("encrypt %d bytes: %v", len(pt), err)
		}
		if id != v.CurrentKeyID() {
			t.Errorf("key id: got %s, want %s", id, v.CurrentKeyID())
		}
		if len(pt) >= 8 && bytes.Contains(ct, pt[:8]) {
			t.Errorf("ciphertext of %d bytes contains the plaintext", len(pt))
		}
		got, err := v.Decrypt(ct)
		if err != nil {
			t.Fatalf("decrypt %d bytes: %v", len(pt), err)
		}
		if !bytes.Equal(got, pt) {
			t.Fatalf("round trip of %d bytes: got %d bytes back", len(pt), len(got))
		}
	}
	a, _, _ := v.Encrypt([]byte("same"))
	b, _, _ := v.Encrypt([]byte("same"))
	if bytes.Equal(a, b) {
		t.Error("two encryptions of one value are equal; want randomized ciphertexts")
	}
	if _, _, err := v.Encrypt(make([]byte, MaxPlaintextSize+1)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("oversized secret: got %v, want ErrTooLarge", err)
	}
	if _, _, err := v.EncryptFor(strings.Repeat("a", MaxAADSize+1), nil); !errors.Is(err, ErrTooLarge) {
		t.Errorf("oversized aad: got %v, want ErrTooLarge", err)
	}
}

func TestAssociatedData(t *testing.T) {
	v := openVault(t, filepath.Join(t.TempDir(), "vault"), "")
	ct, _, err := v.EncryptFor("org:1/secret:DB_PASSWORD", []byte("hunter22"))
	if err != nil {
		t.Fatal(err)
	}
	if pt, err := v.DecryptFor("org:1/secret:DB_PASSWORD", ct); err != nil || string(pt) != "hunter22" {
		t.Fatalf("same aad: got %q, %v; want hunter22", pt, err)
	}
	for _, aad := range []string{"org:2/secret:DB_PASSWORD", "org:1/secret:DB_PASSWORd", "org:1/secret:DB_PASSWORD ", ""} {
		if _, err := v.DecryptFor(aad, ct); !errors.Is(err, ErrAADMismatch) {
			t.Errorf("aad %q: got %v, want ErrAADMismatch", aad, err)
		}
	}
	if _, err := v.Decrypt(ct); !errors.Is(err, ErrAADMismatch) {
		t.Errorf("Decrypt of a bound ciphertext: got %v, want ErrAADMismatch", err)
	}
	plain, _, _ := v.Encrypt([]byte("hunter22"))
	if _, err := v.DecryptFor("org:1/secret:DB_PASSWORD", plain); !errors.Is(err, ErrAADMismatch) {
		t.Errorf("DecryptFor of an unbound ciphertext: got %v, want ErrAADMismatch", err)
	}
}

func TestUndecryptable(t *testing.T) {
	v := openVault(t, filepath.Join(t.TempDir(), "vault"), "")
	other := openVault(t, filepath.Join(t.TempDir(), "vault"), "")
	ct, _, _ := v.EncryptFor("a", []byte("secret value"))

	if _, err := other.DecryptFor("a", ct); !errors.Is(err, ErrNoMatchingKey) {
		t.Errorf("another vault's ciphertext: got %v, want ErrNoMatchingKey", err)
	}
	flipped := bytes.Clone(ct)
	flipped[len(flipped)-3] ^= 1
	if _, err := v.DecryptFor("a", flipped); !errors.Is(err, ErrMalformed) {
		t.Errorf("altered payload: got %v, want ErrMalformed", err)
	}
	if _, err := v.DecryptFor("a", ct[:len(ct)-1]); !errors.Is(err, ErrMalformed) {
		t.Errorf("truncated: got %v, want ErrMalformed", err)
	}
	for _, junk := range [][]byte{nil, []byte("not age"), []byte(ageIntro + "-> X25519 abc\n")} {
		if _, err := v.Decrypt(junk); !errors.Is(err, ErrMalformed) {
			t.Errorf("junk %q: got %v, want ErrMalformed", junk, err)
		}
	}
	// A valid age file that this package did not make has no envelope.
	var raw bytes.Buffer
	w, _ := age.Encrypt(&raw, v.snapshot().current().recipient)
	_, _ = w.Write([]byte("\x07plain age"))
	_ = w.Close()
	if _, err := v.Decrypt(raw.Bytes()); !errors.Is(err, ErrMalformed) {
		t.Errorf("foreign age file: got %v, want ErrMalformed", err)
	}
}

func TestRotation(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vault")
	v := openVault(t, dir, "")
	k1 := v.CurrentKeyID()
	old, id, _ := v.EncryptFor("org:1/secret:A", []byte("value-one"))
	if id != k1 {
		t.Fatalf("key id: got %s, want %s", id, k1)
	}

	k2, err := v.Rotate()
	if err != nil {
		t.Fatal(err)
	}
	if k2 == k1 || v.CurrentKeyID() != k2 {
		t.Fatalf("after rotate: current %s, new %s, old %s", v.CurrentKeyID(), k2, k1)
	}
	if got := v.KeyIDs(); !slices.Equal(got, []string{k1, k2}) {
		t.Fatalf("key ids: got %v, want [%s %s]", got, k1, k2)
	}
	if pt, err := v.DecryptFor("org:1/secret:A", old); err != nil || string(pt) != "value-one" {
		t.Fatalf("old ciphertext after rotate: got %q, %v", pt, err)
	}
	if _, id, _ := v.Encrypt([]byte("x")); id != k2 {
		t.Errorf("new ciphertext key: got %s, want %s", id, k2)
	}

	re, id, err := v.Reencrypt(old)
	if err != nil || id != k2 {
		t.Fatalf("reencrypt: got key %s, %v; want %s", id, err, k2)
	}
	if _, err := v.DecryptFor("org:2/secret:A", re); !errors.Is(err, ErrAADMismatch) {
		t.Errorf("reencrypt lost the aad binding: got %v", err)
	}

	if err := v.Retire(k2); !errors.Is(err, ErrRetireCurrent) {
		t.Errorf("retire current: got %v, want ErrRetireCurrent", err)
	}
	if err := v.Retire("000000000000"); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("retire unknown: got %v, want ErrUnknownKey", err)
	}
	if err := v.Retire(k1); err != nil {
		t.Fatal(err)
	}
	if _, err := v.DecryptFor("org:1/secret:A", old); !errors.Is(err, ErrNoMatchingKey) {
		t.Errorf("ciphertext of a retired key: got %v, want ErrNoMatchingKey", err)
	}
	if _, _, err := v.Reencrypt(old); !errors.Is(err, ErrNoMatchingKey) {
		t.Errorf("reencrypt with a retired key: got %v, want ErrNoMatchingKey", err)
	}

	// The retirement and the new key survive a restart.
	v2 := openVault(t, dir, "")
	if got := v2.KeyIDs(); !slices.Equal(got, []string{k2}) {
		t.Fatalf("key ids after restart: got %v, want [%s]", got, k2)
	}
	if pt, err := v2.DecryptFor("org:1/secret:A", re); err != nil || string(pt) != "value-one" {
		t.Errorf("re-encrypted value after restart: got %q, %v", pt, err)
	}
}

func TestRestartKeepsKeys(t *testing.T) {
	for _, pass := range []string{"", "correct horse"} {
		t.Run("passphrase="+pass, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "vault")
			v := openVault(t, dir, pass)
			a, _, _ := v.EncryptFor("k", []byte("first"))
			if _, err := v.Rotate(); err != nil {
				t.Fatal(err)
			}
			b, _, _ := v.EncryptFor("k", []byte("second"))

			v2 := openVault(t, dir, pass)
			if !slices.Equal(v2.KeyIDs(), v.KeyIDs()) || v2.CurrentKeyID() != v.CurrentKeyID() {
				t.Fatalf("keys after restart: got %v current %s, want %v current %s",
					v2.KeyIDs(), v2.CurrentKeyID(), v.KeyIDs(), v.CurrentKeyID())
			}
			for ct, want := range map[*[]byte]string{&a: "first", &b: "second"} {
				if pt, err := v2.DecryptFor("k", *ct); err != nil || string(pt) != want {
					t.Errorf("after restart: got %q, %v; want %q", pt, err, want)
				}
			}
		})
	}
}

func TestFileModes(t *testing.T) {
	for _, pass := range []string{"", "pw"} {
		dir := filepath.Join(t.TempDir(), "data", "vault")
		v := openVault(t, dir, pass)
		if _, err := v.Rotate(); err != nil {
			t.Fatal(err)
		}
		checkModes(t, dir)
	}

	// Loose permissions are tightened at the next successful Open.
	dir := filepath.Join(t.TempDir(), "vault")
	openVault(t, dir, "")
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, keyringFile), 0o644); err != nil {
		t.Fatal(err)
	}
	openVault(t, dir, "")
	checkModes(t, dir)
}

func checkModes(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != keyringFile {
		t.Errorf("files in %s: got %v, want only %s", dir, entries, keyringFile)
	}
	for path, want := range map[string]fs.FileMode{dir: 0o700, filepath.Join(dir, keyringFile): 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("mode of %s: got %o, want %o", path, got, want)
		}
	}
}

func TestFreshVaultInLooseExistingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vault")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	openVault(t, dir, "")
	checkModes(t, dir)
}
