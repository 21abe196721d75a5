package shellscan

import (
	"os"
	"strings"
	"testing"
)

func scratchLines(t *testing.T, name string) []string {
	b, err := os.ReadFile("../../../testdata/sandbox/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		l = strings.NewReplacer("⏎", "\n", "@M@", "mk/m1", "@V@", "vic/v1", "@D@", "vic/d1", "@H@", "homes/h1", "@URL@", "http://127.0.0.1:9/i.sh", "@BASE@", "http://127.0.0.1:9").Replace(l)
		out = append(out, l)
	}
	return out
}

func TestScratchSandboxCorpus(t *testing.T) {
	ro, _ := NewReadOnly(nil)
	for _, l := range scratchLines(t, "writes.txt") {
		if ok, why := ro.Proves(Analyze(l)); ok {
			t.Logf("RO-ESCAPE %q: %s", l, why)
		}
	}
	for f, cat := range map[string]string{"deletes.txt": DeletesFiles, "downloads.txt": RunsDownloadedCode, "stops.txt": StopsHost} {
		for _, l := range scratchLines(t, f) {
			a := Analyze(l)
			if !Has(DefaultCatalog.Effects(a), cat) && !a.IsOpaque() {
				t.Logf("MN-ESCAPE %s %q: %s", f, l, a.Summary())
			}
		}
	}
	for _, l := range scratchLines(t, "lookalikes.txt") {
		a := Analyze(l)
		ok, why := ro.Proves(a)
		if a.IsOpaque() || len(DefaultCatalog.Effects(a)) > 0 {
			t.Logf("LOOK-BLOCK %q: %s %v", l, a.Summary(), DefaultCatalog.Effects(a))
		}
		t.Logf("LOOK ro=%v %q: %s", ok, l, why)
	}
}
