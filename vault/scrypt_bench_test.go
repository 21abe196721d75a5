package vault

import (
	"log/slog"
	"path/filepath"
	"testing"
)

// BenchmarkOpenWrapped measures the start-up cost of a passphrase at age's
// default scrypt work factor (2^18, 256 MiB); Rotate and Retire pay it too.
func BenchmarkOpenWrapped(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "vault")
	if _, err := Open(dir, "bench passphrase", nil); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Open(dir, "bench passphrase", slog.New(slog.DiscardHandler)); err != nil {
			b.Fatal(err)
		}
	}
}
