package connector

import (
	"strings"
	"testing"
)

func TestAllowList(t *testing.T) {
	a, err := parseAllow(strings.NewReader(`
# host policy
df -h
systemctl status *
journalctl **
re:^uptime( -p)?$
`))
	if err != nil {
		t.Fatal(err)
	}
	for cmd, want := range map[string]bool{
		"df -h":                        true,
		"  df    -h ":                  true,
		"df -h; rm -rf /":              false,
		"df -h\nrm -rf /":              false,
		"systemctl status nginx":       true,
		"systemctl status nginx mysql": true,
		"systemctl status x; rm -rf /": false,
		"systemctl status $(reboot)":   false,
		"systemctl status x\nreboot":   false,
		"systemctl restart nginx":      false,
		"journalctl -u x | tail":       true,
		"uptime":                       true,
		"uptime -p":                    true,
		"uptime -s":                    false,
		"rm -rf /":                     false,
		"":                             false,
	} {
		if got := a.Allows(cmd); got != want {
			t.Errorf("Allows(%q) = %v, want %v", cmd, got, want)
		}
	}
	var none *AllowList
	if !none.Allows("anything") || !none.Empty() {
		t.Error("an absent allow-list allows everything")
	}
	if _, err := CompileAllowList([]string{"re:("}); err == nil || !strings.Contains(err.Error(), "re:(") {
		t.Errorf("a bad pattern must be named: %v", err)
	}
}
