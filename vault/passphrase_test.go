package vault

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"filippo.io/age"
)

func TestPassphraseWrap(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vault")
	v := openVault(t, dir, "correct horse battery")
	ct, _, _ := v.EncryptFor("ctx", []byte("wrapped-secret"))

	data, err := os.ReadFile(filepath.Join(dir, keyringFile))
	if err != nil {
		t.Fatal(err)
	}
	if !isAgeFile(data) || bytes.Contains(data, []byte("AGE-SECRET-KEY-")) {
		t.Fatalf("wrapped keyring holds a readable key:\n%s", data)
	}
	// age itself opens it with the passphrase: the format is plain age.
	id, _ := age.NewScryptIdentity("correct horse battery")
	if _, err := age.Decrypt(bytes.NewReader(data), id); err != nil {
		t.Fatalf("age cannot open the wrapped keyring: %v", err)
	}

	before := dirSnapshot(t, dir)
	_, err = open(dir, "wrong horse", slog.New(slog.DiscardHandler), testScryptLogN)
	if !errors.Is(err, ErrWrongPassphrase) {
		t.Fatalf("wrong passphrase: got %v, want ErrWrongPassphrase", err)
	}
	if after := dirSnapshot(t, dir); !reflect.DeepEqual(before, after) {
		t.Fatal("a wrong passphrase changed the vault directory")
	}
	_, err = open(dir, "", slog.New(slog.DiscardHandler), testScryptLogN)
	if !errors.Is(err, ErrPassphraseRequired) {
		t.Fatalf("no passphrase: got %v, want ErrPassphraseRequired", err)
	}
	if after := dirSnapshot(t, dir); !reflect.DeepEqual(before, after) {
		t.Fatal("a missing passphrase changed the vault directory")
	}

	v2 := openVault(t, dir, "correct horse battery")
	if pt, err := v2.DecryptFor("ctx", ct); err != nil || string(pt) != "wrapped-secret" {
		t.Fatalf("right passphrase: got %q, %v", pt, err)
	}
}

func TestPlainKeyringWrappedInPlace(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vault")
	v := openVault(t, dir, "")
	if _, err := v.Rotate(); err != nil {
		t.Fatal(err)
	}
	ct, _, _ := v.EncryptFor("ctx", []byte("before-wrap"))

	v2 := openVault(t, dir, "now-with-passphrase")
	if !slices.Equal(v2.KeyIDs(), v.KeyIDs()) {
		t.Fatalf("keys after wrap: got %v, want %v", v2.KeyIDs(), v.KeyIDs())
	}
	for p, content := range dirSnapshot(t, dir) {
		if bytes.Contains([]byte(content), []byte("AGE-SECRET-KEY-")) {
			t.Errorf("%s still holds a plain key after wrapping", p)
		}
	}
	checkModes(t, dir)
	if pt, err := v2.DecryptFor("ctx", ct); err != nil || string(pt) != "before-wrap" {
		t.Fatalf("after wrap: got %q, %v", pt, err)
	}
	if _, err := open(dir, "", nil, testScryptLogN); !errors.Is(err, ErrPassphraseRequired) {
		t.Fatalf("wrapped keyring without passphrase: got %v, want ErrPassphraseRequired", err)
	}
}

// The plain keyring is an age identity file: the age library's own parser
// reads it and opens vault ciphertexts, which is the recovery path.
func TestKeyringIsAnAgeIdentityFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vault")
	v := openVault(t, dir, "")
	old, _, _ := v.EncryptFor("ctx", []byte("recover-me"))
	if _, err := v.Rotate(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, keyringFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ids, err := age.ParseIdentities(f)
	if err != nil || len(ids) != 2 {
		t.Fatalf("age.ParseIdentities: got %d identities, %v; want 2", len(ids), err)
	}
	r, err := age.Decrypt(bytes.NewReader(old), ids...)
	if err != nil {
		t.Fatal(err)
	}
	var env bytes.Buffer
	if _, err := env.ReadFrom(r); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(env.Bytes(), []byte("ctx"+"recover-me")) {
		t.Errorf("envelope: got %q, want it to end with the aad and the secret", env.Bytes())
	}
}

func TestCorruptKeyringIsNotReplaced(t *testing.T) {
	for name, content := range map[string]string{
		"empty":       "",
		"comments":    "# nothing here\n",
		"garbage":     "AGE-SECRET-KEY-1NOTAKEY\n",
		"age garbage": ageIntro + "junk",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, keyringFile)
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := open(dir, "pw", nil, testScryptLogN)
			if !errors.Is(err, ErrCorruptKeyring) {
				t.Fatalf("got %v, want ErrCorruptKeyring", err)
			}
			if got, _ := os.ReadFile(path); string(got) != content {
				t.Fatal("a corrupt keyring was rewritten")
			}
		})
	}
}

func TestLeftoverTempFilesRemoved(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vault")
	openVault(t, dir, "")
	leftover := filepath.Join(dir, ".keyring-123.tmp")
	inFlight := filepath.Join(dir, ".keyring-456.tmp")
	for _, p := range []string{leftover, inFlight} {
		if err := os.WriteFile(p, []byte("AGE-SECRET-KEY-1..."), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * tempGrace)
	if err := os.Chtimes(leftover, old, old); err != nil {
		t.Fatal(err)
	}
	openVault(t, dir, "")
	if _, err := os.Stat(leftover); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("leftover temp file: got %v, want it removed", err)
	}
	// A fresh temporary file may be another process's write in flight (a
	// rotate while the server reloads its keyring): it stays.
	if _, err := os.Stat(inFlight); err != nil {
		t.Errorf("in-flight temp file: got %v, want it kept", err)
	}
}
