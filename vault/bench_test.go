package vault

import (
	"path/filepath"
	"testing"
)

var secret64 = []byte("sk-proj-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTU")

func BenchmarkEncrypt64(b *testing.B) {
	v := openVault(b, filepath.Join(b.TempDir(), "vault"), "")
	b.SetBytes(int64(len(secret64)))
	for b.Loop() {
		if _, _, err := v.EncryptFor("org:1/secret:LLM_API_KEY", secret64); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecrypt64(b *testing.B) {
	v := openVault(b, filepath.Join(b.TempDir(), "vault"), "")
	ct, _, err := v.EncryptFor("org:1/secret:LLM_API_KEY", secret64)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(secret64)))
	for b.Loop() {
		if _, err := v.DecryptFor("org:1/secret:LLM_API_KEY", ct); err != nil {
			b.Fatal(err)
		}
	}
}

// The worst case after rotations: the ciphertext's key is the oldest of four,
// so age tries three other identities first.
func BenchmarkDecrypt64OldestOfFourKeys(b *testing.B) {
	v := openVault(b, filepath.Join(b.TempDir(), "vault"), "")
	ct, _, err := v.EncryptFor("org:1/secret:LLM_API_KEY", secret64)
	if err != nil {
		b.Fatal(err)
	}
	for range 3 {
		if _, err := v.Rotate(); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(secret64)))
	for b.Loop() {
		if _, err := v.DecryptFor("org:1/secret:LLM_API_KEY", ct); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMaskWriter(b *testing.B) {
	m := NewMasker("sk-proj-0123456789abcdef", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "hunter22")
	chunk := []byte("2026-11-22T13:00:00Z INFO request served path=/api/tasks status=200 duration=1.2ms\n")
	b.SetBytes(int64(len(chunk)))
	w := m.Writer(discard{})
	for b.Loop() {
		if _, err := w.Write(chunk); err != nil {
			b.Fatal(err)
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
