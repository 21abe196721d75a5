package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A data dir that does not exist is only "nothing to do" when serve can
// create it. (Tests run as root, where mode bits do not stop a write: a file
// in place of the parent directory stops it for everyone.)
func TestDoctorSaysWhenTheDataDirCannotBeCreated(t *testing.T) {
	base := t.TempDir()
	blocker := filepath.Join(base, "srv")
	if err := os.WriteFile(blocker, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"doctor", "--offline", "--data-dir", filepath.Join(blocker, "opsagent", "data")}, env(nil), &out, &errb)
	got := doctorLines(out.String())
	if err == nil || len(got["data_dir"]) != 1 || got["data_dir"][0] != "FAIL" || !strings.Contains(out.String(), blocker+" is not a directory") ||
		strings.Contains(out.String(), "nothing to do") {
		t.Fatalf("doctor with an uncreatable data dir: %v\n%s", err, out.String())
	}
	// A parent that exists but that nobody may write, root included: sysfs.
	if st, err := os.Stat("/sys"); err == nil && st.IsDir() {
		out.Reset()
		err := run(context.Background(), []string{"doctor", "--offline", "--data-dir", "/sys/opsagent-data"}, env(nil), &out, &errb)
		if got := doctorLines(out.String()); err == nil || len(got["data_dir"]) != 1 || got["data_dir"][0] != "FAIL" ||
			!strings.Contains(out.String(), "/sys is not writable") {
			t.Fatalf("doctor with a data dir under a read-only parent: %v\n%s", err, out.String())
		}
	}
	// A creatable one is still fine, and is not created by doctor.
	out.Reset()
	fresh := filepath.Join(base, "new", "data")
	if err := run(context.Background(), []string{"doctor", "--offline", "--data-dir", fresh}, env(nil), &out, &errb); err != nil ||
		!strings.Contains(out.String(), "nothing to do: serve creates it") {
		t.Fatalf("doctor with a creatable data dir: %v\n%s", err, out.String())
	}
	if _, err := os.Stat(filepath.Join(base, "new")); !os.IsNotExist(err) {
		t.Fatalf("doctor created something: %v", err)
	}
}

// With --database-url the database is checked even before the data dir exists.
func TestDoctorChecksPostgresWithoutADataDir(t *testing.T) {
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"doctor", "--offline", "--data-dir", filepath.Join(t.TempDir(), "data"),
		"--database-url", "postgres://u:pw@127.0.0.1:1/x?connect_timeout=5"}, env(nil), &out, &errb)
	got := doctorLines(out.String())
	if err == nil || len(got["database"]) == 0 || got["database"][0] != "FAIL" {
		t.Fatalf("doctor with an unreachable database and no data dir: %v\n%s", err, out.String())
	}
}
