package backup

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func archiveOf(t *testing.T, files map[string]string, typ byte) *bytes.Buffer {
	t.Helper()
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	for name, body := range files {
		hdr := &tar.Header{Name: name, Mode: 0o600, Size: int64(len(body)), Typeflag: typ}
		if typ == tar.TypeSymlink {
			hdr.Size, hdr.Linkname = 0, body
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if typ == tar.TypeReg {
			tw.Write([]byte(body))
		}
	}
	tw.Close()
	gz.Close()
	return &b
}

// TestRestoreRefusesUnsafeArchives: names that climb out, absolute names and
// links are refused, nothing is written outside the target, and the target
// is left empty.
func TestRestoreRefusesUnsafeArchives(t *testing.T) {
	parent := t.TempDir()
	for _, tc := range []struct {
		name  string
		files map[string]string
		typ   byte
	}{
		{"dotdot", map[string]string{"../evil": "x"}, tar.TypeReg},
		{"nested dotdot", map[string]string{"rag/../../evil": "x"}, tar.TypeReg},
		{"absolute", map[string]string{"/tmp/evil": "x"}, tar.TypeReg},
		{"symlink", map[string]string{"rag": "/etc"}, tar.TypeSymlink},
		{"no manifest", map[string]string{"opsagent.db": "x"}, tar.TypeReg},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(parent, strings.ReplaceAll(tc.name, " ", "_"))
			_, err := Restore(context.Background(), archiveOf(t, tc.files, tc.typ), dir)
			if err == nil {
				t.Fatal("restore accepted an unsafe archive")
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Fatalf("left %d entries behind", len(entries))
			}
			if _, err := os.Stat(filepath.Join(parent, "evil")); err == nil {
				t.Fatal("wrote outside the target")
			}
		})
	}
	if _, err := Restore(context.Background(), strings.NewReader("not gzip"), filepath.Join(parent, "junk")); err == nil {
		t.Fatal("accepted junk")
	}
}
