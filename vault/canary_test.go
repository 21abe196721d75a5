package vault

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestCanary stores secrets the way the server will (ciphertexts in a file
// standing in for the SQLite database, beside the vault), rotates, re-encrypts
// and retires, then searches every byte under the data directory for the
// plaintexts, raw and in common encodings. With a passphrase, no secret key
// may be readable either.
func TestCanary(t *testing.T) {
	for _, pass := range []string{"", "canary passphrase"} {
		t.Run(fmt.Sprintf("passphrase=%t", pass != ""), func(t *testing.T) {
			data := t.TempDir()
			v := openVault(t, filepath.Join(data, "vault"), pass)
			canaries := map[string]string{}
			for i := range 5 {
				canaries[fmt.Sprintf("org:%d/secret:API_KEY", i)] = fmt.Sprintf("CANARY-%d-3f1c9e5b7a2d4c6e8f0a", i)
			}
			rows := map[string][]byte{}
			save := func() {
				var db bytes.Buffer
				for aad, ct := range rows {
					db.WriteString(aad + "\t" + hex.EncodeToString(ct) + "\n")
					db.Write(ct)
				}
				if err := os.WriteFile(filepath.Join(data, "opsagent.db"), db.Bytes(), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			for aad, secret := range canaries {
				ct, _, err := v.EncryptFor(aad, []byte(secret))
				if err != nil {
					t.Fatal(err)
				}
				rows[aad] = ct
			}
			save()
			old := v.CurrentKeyID()
			if _, err := v.Rotate(); err != nil {
				t.Fatal(err)
			}
			for aad, ct := range rows {
				re, _, err := v.Reencrypt(ct)
				if err != nil {
					t.Fatal(err)
				}
				rows[aad] = re
			}
			save()
			if err := v.Retire(old); err != nil {
				t.Fatal(err)
			}
			v = openVault(t, filepath.Join(data, "vault"), pass)
			for aad, secret := range canaries {
				if pt, err := v.DecryptFor(aad, rows[aad]); err != nil || string(pt) != secret {
					t.Fatalf("%s after restart: got %q, %v", aad, pt, err)
				}
			}

			var needles [][]byte
			for _, secret := range canaries {
				needles = append(needles, []byte(secret), []byte(hex.EncodeToString([]byte(secret))),
					[]byte(base64.StdEncoding.EncodeToString([]byte(secret))))
			}
			if pass != "" {
				needles = append(needles, []byte("AGE-SECRET-KEY-"), []byte(pass))
			}
			files := 0
			err := filepath.WalkDir(data, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				files++
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				for _, n := range needles {
					if bytes.Contains(b, n) {
						t.Errorf("%s contains %q", p, n)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if files != 2 {
				t.Errorf("files under the data dir: got %d, want 2 (keyring and database)", files)
			}
		})
	}
}

// Encrypt and Decrypt keep working, with no error, while keys rotate.
func TestConcurrentUseDuringRotation(t *testing.T) {
	v := openVault(t, filepath.Join(t.TempDir(), "vault"), "pw")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 4 {
		wg.Go(func() {
			for i := range 50 {
				want := fmt.Sprintf("g%d-value-%d", g, i)
				ct, _, err := v.EncryptFor("ctx", []byte(want))
				if err == nil {
					var pt []byte
					pt, err = v.DecryptFor("ctx", ct)
					if err == nil && string(pt) != want {
						err = fmt.Errorf("got %q, want %q", pt, want)
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for range 3 {
		if _, err := v.Rotate(); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := len(v.KeyIDs()); n != 4 {
		t.Errorf("keys: got %d, want 4", n)
	}
}
