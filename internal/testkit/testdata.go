package testkit

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Testdata is the path of parts below the module's top-level testdata/ (the
// fixtures tests of several packages share), wherever the test runs from.
func Testdata(parts ...string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(append([]string{filepath.Dir(file), "..", "..", "testdata"}, parts...)...)
}

// Commands reads a corpus of testdata/commands: one command a line, blank
// lines and # comments skipped, ⏎ standing for a newline and @URL@ for url
// (where a command downloads code from).
func Commands(tb testing.TB, name, url string) []string {
	tb.Helper()
	f, err := os.Open(Testdata("commands", name))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, strings.ReplaceAll(strings.ReplaceAll(line, "⏎", "\n"), "@URL@", url))
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}
