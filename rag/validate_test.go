package rag

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPutRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, Options{MaxDocBytes: 4096})
	ok := Scope{OrgID: "o", ProjectID: "p"}
	cases := []struct {
		name       string
		scope      Scope
		collection string
		docName    string
		content    string
		tags       []string
		want       error
		field      string
	}{
		{"parent", ok, "runbooks", "../escape.md", "x", nil, ErrInvalidName, "name"},
		{"nested parent", ok, "runbooks", "a/../../../escape.md", "x", nil, ErrInvalidName, "name"},
		{"absolute", ok, "runbooks", "/etc/cron.d/x.md", "x", nil, ErrInvalidName, "name"},
		{"NUL", ok, "runbooks", "a\x00.md", "x", nil, ErrInvalidName, "name"},
		{"hidden", ok, "runbooks", ".bashrc.md", "x", nil, ErrInvalidName, "name"},
		{"hidden dir", ok, "runbooks", "x/.git/config.md", "x", nil, ErrInvalidName, "name"},
		{"backslash", ok, "runbooks", `..\escape.md`, "x", nil, ErrInvalidName, "name"},
		{"empty segment", ok, "runbooks", "a//b.md", "x", nil, ErrInvalidName, "name"},
		{"dot segment", ok, "runbooks", "./b.md", "x", nil, ErrInvalidName, "name"},
		{"extension", ok, "runbooks", "run.sh", "x", nil, ErrInvalidName, "name"},
		{"empty", ok, "runbooks", "", "x", nil, ErrInvalidName, "name"},
		{"too deep", ok, "runbooks", "a/b/c/d/e.md", "x", nil, ErrInvalidName, "name"},
		{"collection", ok, "secrets", "a.md", "x", nil, ErrUnknownCollection, "collection"},
		{"collection traversal", ok, "../runbooks", "a.md", "x", nil, ErrUnknownCollection, "collection"},
		{"org traversal", Scope{OrgID: "..", ProjectID: "p"}, "runbooks", "a.md", "x", nil, ErrInvalidScope, "org_id"},
		{"project traversal", Scope{OrgID: "o", ProjectID: "../p"}, "runbooks", "a.md", "x", nil, ErrInvalidScope, "project_id"},
		{"project _org", Scope{OrgID: "o", ProjectID: "_org"}, "runbooks", "a.md", "x", nil, ErrInvalidScope, "project_id"},
		{"no org", Scope{ProjectID: "p"}, "runbooks", "a.md", "x", nil, ErrInvalidScope, "org_id"},
		{"NUL byte", ok, "runbooks", "a.md", "ab\x00cd", nil, ErrNotText, "content"},
		{"invalid UTF-8", ok, "runbooks", "a.md", "ab\xff\xfe", nil, ErrNotText, "content"},
		{"too large", ok, "runbooks", "a.md", strings.Repeat("a", 4097), nil, ErrTooLarge, "content"},
		{"tags make it too large", ok, "runbooks", "a.md", strings.Repeat("a", 4090), []string{"k8s"}, ErrTooLarge, "content"},
		{"bad tag", ok, "runbooks", "a.md", "x", []string{"has space"}, ErrInvalidTags, "tags"},
		{"bad front matter", ok, "runbooks", "a.md", "---\ntags: [unclosed\n---\nbody", nil, ErrNotText, "content"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := s.Put(context.Background(), c.scope, c.collection, c.docName, []byte(c.content), c.tags)
			var e *Error
			if !errors.Is(err, c.want) || !errors.As(err, &e) || e.Field != c.field {
				t.Fatalf("got %v, want %v on field %s", err, c.want, c.field)
			}
		})
	}
	// Nothing was written at all: no file anywhere under docs/.
	filepath.WalkDir(filepath.Join(dir, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Errorf("file written by a rejected Put: %s", p)
		}
		return nil
	})
	for _, name := range []string{"escape.md", "../escape.md"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s written outside docs", name)
		}
	}
	_, err := s.Get(context.Background(), ok, "runbooks", "../../../../etc/passwd.md")
	if !errors.Is(err, ErrInvalidName) {
		t.Fatalf("Get traversal: got %v", err)
	}
	if err := s.Delete(context.Background(), ok, "runbooks", "../x.md"); !errors.Is(err, ErrInvalidName) {
		t.Fatalf("Delete traversal: got %v", err)
	}
	if _, err := s.Search(context.Background(), ok, Query{Text: "x", Limit: MaxLimit + 1}); !errors.Is(err, ErrInvalidQuery) {
		t.Fatalf("limit: got %v", err)
	}
	if _, err := s.Search(context.Background(), ok, Query{Text: " "}); !errors.Is(err, ErrInvalidQuery) {
		t.Fatalf("empty query: got %v", err)
	}
	if _, err := s.Search(context.Background(), ok, Query{Text: "x", Collections: []string{"nope"}}); !errors.Is(err, ErrUnknownCollection) {
		t.Fatalf("collection: got %v", err)
	}
}

// A symbolic link planted in a project folder cannot make Put write, or Get read, outside that project.
func TestSymlinksDoNotLeadOutOfTheProject(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.md"), []byte("top secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, dir, Options{})
	scope := Scope{OrgID: "o", ProjectID: "p"}
	proj := filepath.Join(dir, "docs", "o", "p")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(proj, "runbooks")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(context.Background(), scope, "runbooks", "planted.md", []byte("x"), nil); err == nil {
		t.Fatal("Put through a symlink out of the project succeeded")
	}
	if _, err := os.Stat(filepath.Join(outside, "planted.md")); err == nil {
		t.Fatal("file written outside the data directory")
	}
	if _, err := s.Get(context.Background(), scope, "runbooks", "secret.md"); err == nil {
		t.Fatal("Get read a file outside the project")
	}
	mustSync(t, s)
	if hits := search(t, s, scope, Query{Text: "secret"}); len(hits) != 0 {
		t.Fatalf("sync followed a symlink: %v", hitNames(hits))
	}
}
