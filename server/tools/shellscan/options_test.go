package shellscan

import "testing"

// GNU spellings of an excluded option keep a line off the read-only list;
// the harmless spellings of the same program stay on it.
func TestReadOnlyExclusionsSeeGNUOptionSpellings(t *testing.T) {
	ro, err := NewReadOnly(nil)
	if err != nil {
		t.Fatal(err)
	}
	for line, want := range map[string]bool{
		"sort -ro out /etc/hostname": false, "sort -uoout /etc/hostname": false, "sort --ou=out /etc/hostname": false,
		"sort --outp out /etc/hostname": false, "sort --o=out /etc/hostname": false, "sort /etc/hostname -o out": false,
		"sort /etc/hostname --output=out": false,
		"sort -r /etc/hostname":           true, "sort --reverse /etc/hostname": true, "sort -n -k3 -t: /etc/passwd": true,
	} {
		if got, why := ro.Proves(Analyze(line)); got != want {
			t.Errorf("%q: read-only %v (%s), want %v", line, got, why, want)
		}
	}
}
