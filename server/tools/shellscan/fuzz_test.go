package shellscan

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// FuzzAnalyze: no input panics, and input the shell parser rejects is
// always opaque (a must_never rule then blocks it).
func FuzzAnalyze(f *testing.F) {
	for _, file := range []string{"deletes_files.txt", "stops_host.txt", "runs_downloaded_code.txt", "lookalikes.txt"} {
		for _, line := range readCorpus(f, file) {
			f.Add(line)
		}
	}
	f.Add("a |")
	f.Add("$'\\x")
	f.Add("{a,b}{c,d}{e,f}")
	f.Fuzz(func(t *testing.T, src string) {
		a := Analyze(src)
		_ = a.Summary()
		_ = DefaultCatalog.Effects(a)
		_, parseErr := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
		if parseErr != nil && !a.IsOpaque() {
			t.Fatalf("unparseable input is not opaque: %q (%v)", src, parseErr)
		}
	})
}
