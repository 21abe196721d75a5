package shellscan

import (
	"testing"

	"github.com/opsagent/opsagent/internal/testkit"
)

// readCorpus reads a file of testdata/commands (@URL@ a download that is never fetched).
func readCorpus(t testing.TB, name string) []string {
	t.Helper()
	return testkit.Commands(t, name, "http://127.0.0.1:9/i.sh")
}

// Every forbidden spelling either shows its effect or is opaque (which a
// must_never rule blocks by default): none passes as something else.
func TestCorpusForbiddenSpellingsAreCaught(t *testing.T) {
	for file, category := range map[string]string{"deletes_files.txt": DeletesFiles, "stops_host.txt": StopsHost,
		"runs_downloaded_code.txt": RunsDownloadedCode} {
		lines := readCorpus(t, file)
		if len(lines) < 100 {
			t.Fatalf("%s has %d spellings, want at least 100", file, len(lines))
		}
		plain := 0
		for _, line := range lines {
			a := Analyze(line)
			effects := DefaultCatalog.Effects(a)
			if !Has(effects, category) && !a.IsOpaque() {
				t.Errorf("%s: %q escapes: parsed as %s, effects %v", file, line, a.Summary(), effects)
			}
			if Has(effects, category) {
				plain++
			}
		}
		t.Logf("%s: %d spellings, %d proven %s, the rest opaque", file, len(lines), plain, category)
	}
}

func TestCorpusLookalikesAreNeitherForbiddenNorOpaque(t *testing.T) {
	for _, line := range readCorpus(t, "lookalikes.txt") {
		a := Analyze(line)
		if a.IsOpaque() {
			t.Errorf("%q is opaque: %s", line, a.Summary())
		}
		for _, e := range DefaultCatalog.Effects(a) {
			if e.Category != Downloads {
				t.Errorf("%q has effect %s (%s)", line, e.Category, e.Because)
			}
		}
	}
}
