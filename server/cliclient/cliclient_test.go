package cliclient

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestSaveLoadKeepsSecretsPrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "credentials.json")
	in := &Credentials{Server: "http://x", AccessToken: "a", RefreshToken: "r", TokenType: "bearer", Expiry: time.Unix(100, 0).UTC()}
	if err := Save(path, in); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("file mode %v (%v), want 0600", st.Mode().Perm(), err)
	}
	if dst, _ := os.Stat(filepath.Dir(path)); dst.Mode().Perm() != 0o700 {
		t.Fatalf("dir mode %v, want 0700", dst.Mode().Perm())
	}
	out, err := Load(path)
	if err != nil || *out != *in {
		t.Fatalf("loaded %+v (%v), want %+v", out, err, in)
	}
	// Overwriting keeps the mode and leaves no temp files behind.
	if err := Save(path, in); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Fatalf("%d files in the directory, want 1", len(ents))
	}
}

func TestRunRejectsStrayArgumentsAndMissingServer(t *testing.T) {
	getenv := func(string) string { return "" }
	if err := Run(t.Context(), "login", []string{"extra"}, getenv, os.Stdout, os.Stderr); err == nil {
		t.Fatal("stray argument accepted")
	}
	if err := Logout(t.Context(), Options{Path: filepath.Join(t.TempDir(), "none.json")}); err == nil {
		t.Fatal("logout without credentials reported success")
	}
}
