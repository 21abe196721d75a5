package server_test

import (
	"strings"
	"testing"
)

// /api/rules/evaluate explains, for a line that stays off the read-only
// list, which option of which program kept it there and why: the option
// tables of the read-only programs, the login-shell rule and the builtins
// that evaluate a subscript are what a person reads on the approval card.
func TestEvaluateNamesTheOptionThatIsNotReadOnly(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.c.must(200, "PUT", "/api/command-policy", map[string]any{"auto_allow_read_only": true})
	for line, want := range map[string]string{
		"sort --foo /etc/hostname":  "unknown option --foo of sort: not known to be read-only",
		"sort --ou=x /etc/hostname": "sort --ou=x (--output) writes files",
		"sort -ro x /etc/hostname":  "sort -ro (-o) writes files",
		"tree -ao x .":              "tree -ao (-o) writes files",
		"pidstat -e touch x":        "pidstat -e runs a program",
		"ip netns exec x ls":        "ip netns exec (exec) runs a program",
		"ip --batch cmds":           "ip --batch (-batch) reads ip commands from a file",
		"journalctl --vacuum-t=1s":  "journalctl --vacuum-t=1s (--vacuum-time) writes files",
		"dmesg -Tc":                 "dmesg -Tc (-c) changes the system's state",
		"find . -fprint x":          "find -fprint writes files",
		"bash -l -c uptime":         "bash -l starts a login or interactive shell",
		"test -v 'a[$(touch x)]'":   "test evaluates the subscript of 'a[$(touch x)]' as code",
		"env -iS'touch x'":          "touch x via env -S is not on the read-only list",
	} {
		got := e.evaluate(t, line)
		if got["verdict"] != "need_approval" || got["read_only"] != false || !strings.Contains(got["reason"].(string), want) {
			t.Errorf("%q: %v, want need_approval explained by %q", line, got, want)
		}
	}
	for _, line := range []string{"sort -r /etc/hostname", "sort /etc/hostname -n", "ip -br a", "find /etc -maxdepth 1 -name hostname",
		"journalctl -n 5 --no-pager", "test -v HOME", "timeout --sig=TERM 5 uptime"} {
		if got := e.evaluate(t, line); got["read_only"] != true {
			t.Errorf("look-alike %q is not read-only: %v", line, got)
		}
	}

	// kill -0 $$ only asks whether the shell exists: a must_never rule on
	// stopping the host does not block it, and still blocks kill -0 1.
	e.c.must(201, "POST", "/api/rules", map[string]any{"kind": "must_never", "description": "Never stop the host",
		"match_type": "effect", "pattern": "stops_host"})
	if got := e.evaluate(t, "kill -0 $$"); got["verdict"] == "block" {
		t.Errorf("kill -0 $$ is blocked as stopping the host: %v", got)
	}
	for _, line := range []string{"kill -0 1", "kill -9 -1", "systemctl start systemd-reboot.service", "echo b > /proc//sysrq-trigger",
		"ssh -o ProxyCommand='systemctl poweroff' h", "timeout --sig=TERM 5 reboot"} {
		if got := e.evaluate(t, line); got["verdict"] != "block" {
			t.Errorf("%q is not blocked under the stops_host rule: %v", line, got)
		}
	}
}
