package shellscan

import (
	"strings"
	"testing"
)

// For each program with an option table, the spellings that write, run a
// program or change the host are never read-only, whichever GNU form they
// take (a unique prefix, a cluster with an attached value, --opt=value, an
// option after the operands); the harmless spellings stay read-only.
func TestOptionTablesRefuseWhatWritesOrRuns(t *testing.T) {
	ro, err := NewReadOnly(nil)
	if err != nil {
		t.Fatal(err)
	}
	refused := map[string]string{ // line -> a word the explanation must hold
		"sort -o out f": "writes files", "sort -ro out f": "(-o)", "sort -uoout f": "(-o)", "sort --ou=out f": "(--output)",
		"sort --outp out f": "--output", "sort f -o out": "-o", "sort f --output=out": "--output", "sort -k1 -o out f": "-o",
		"sort --compress-program=gzip f": "runs a program", "sort --comp=sh f": "runs a program", "sort -T /srv f": "writes files",
		"sort --temp=/srv f": "writes files", "sort --foo f": "unknown option --foo of sort: not known to be read-only",
		"sort -Q f": "unknown option -Q of sort", "sort $OPTS f": "known only at run time",
		"tree -o out": "writes files", "tree -ao out": "(-o)", "tree -aoout": "(-o)", "tree . -o out": "-o", "tree -H . -R": "-R",
		"tree --bogus":       "unknown option --bogus",
		"pidstat -e touch m": "runs a program", "pidstat -ue touch m": "(-e)", "pidstat 1 -e touch m": "-e",
		"ip netns exec x ip link show": "runs a program", "ip netns e x ip link show": "runs a program",
		"ip --batch f": "-batch", "ip -b f": "-batch", "ip -ba f link show": "-batch", "ip -force -b f": "-force",
		"ip link set eth0 down": "changes the network", "ip a add 10.0.0.1/8 dev lo": "changes the network",
		"ip route flush all": "changes the network", "ip neigh del 1.2.3.4 dev eth0": "changes the network", "ip -zz a": "unknown option",
		"ip xfrm state":  "not one of ip's objects",
		"find . -delete": "deletes files", "find . -name x -exec rm {} ;": "runs a program", "find . -execdir x ;": "runs a program",
		"find . -ok x ;": "runs a program", "find . -okdir x ;": "runs a program", "find . -fprint out": "writes files",
		"find . -fprint0 out": "writes files", "find . -fprintf out %p": "writes files", "find . -fls out": "writes files",
		"find . -bogus": "unknown option -bogus of find", "find . $EXPR": "known only at run time",
		"dmesg -c": "changes the system's state", "dmesg -Tc": "(-c)", "dmesg --clear": "--clear", "dmesg --read-c": "--read-clear",
		"dmesg -n1": "(-n)", "dmesg --console-level=1": "--console-level", "dmesg -D": "-D", "dmesg -E": "-E", "dmesg --console-off": "off",
		"journalctl --vacuum-size=1": "writes files", "journalctl --vacuum-t=1s": "--vacuum-time", "journalctl --rot": "--rotate",
		"journalctl --flush": "writes files", "journalctl --sync": "writes files", "journalctl --relinquish-var": "writes files",
		"journalctl --smart-relinquish-var": "writes files", "journalctl --setup-keys": "writes files",
		"journalctl --update-catalog": "writes files", "journalctl --vac=1": "ambiguous",
		"ss -K dst 1.2.3.4": "changes the system's state", "ss -tK": "(-K)", "ss --kill": "--kill", "ss -D out": "writes files",
		"ss --diag=out":      "--diag",
		"date -s 2020-01-01": "changes the host", "date --set=2020-01-01": "changes the host", "date --se 1": "--set",
		"rg --pre=sh x": "runs a program", "rg --pre sh x": "runs a program", "rg --pre-glob '*' x": "runs a program",
		"kubectl get pods --kubeconfig=/tmp/k": "runs a program", "kubectl get pods --kubec /tmp/k": "--kubeconfig",
		"docker ps --config /tmp/d": "runs a program",
		"ls --bogus":                "unknown option --bogus of ls", "cat -Q f": "unknown option -Q of cat", "grep --bogus x f": "unknown option",
		"df --bogus": "unknown option", "ps --bogus": "unknown option", "head --bogus": "unknown option",
	}
	for line, want := range refused {
		ok, why := ro.Proves(Analyze(line))
		if ok {
			t.Errorf("%q is read-only (%s)", line, why)
		} else if !strings.Contains(why, want) {
			t.Errorf("%q: refused as %q, want it to say %q", line, why, want)
		}
	}
	for _, line := range []string{
		"sort -r f", "sort --reverse f", "sort -n -k3 -t: /etc/passwd", "sort -k 2,2 -t , f", "sort --key=2 --field-sep=, f", "sort -u f g",
		"sort f -r", "sort -- -o", "tree -a -L 2 /etc", "tree -J", "pidstat 1 3", "pidstat -u -p 1 1 1",
		"ip a", "ip addr", "ip -br a", "ip a sh", "ip -4 -o addr show dev lo", "ip route", "ip r get 1.1.1.1", "ip -j link",
		"ip -s -s link show lo", "ip -n ns1 route show", "ip netns", "ip netns list", "ip --json route show table all", "ip link show lo",
		"find /etc -maxdepth 1 -name hostname", "find . -type f -newer x -print0", "find -L . -mtime -1 -ls",
		"find . \\( -name a -o -name b \\) -printf %p", "find . -newermt 2024-01-01",
		"dmesg -T", "dmesg --level=err,warn", "dmesg -H -x", "journalctl -u nginx -n 50 --no-pager", "journalctl -b -1 -p err",
		"journalctl --since=-1h -o json", "journalctl -fu x", "ss -tlnp", "ss -s", "ss -o state established", "date -u", "date +%s",
		"rg -n TODO src", "rg -i --glob '*.go' x", "kubectl get pods -n kube-system -o wide",
		"kubectl logs web -c app --tail=20", "docker ps -a --format '{{.Names}}'", "ls -la", "ls --color=auto -lh", "ls -l --sort=size",
		"cat -A f", "grep -rn --include=*.go x .", "grep -5 x f", "grep -e a -e b f", "head -n5 f", "head -5 f", "tail -f f", "tail -n +2 f",
		"df -hT", "df --output=source,pcent", "du -sh --max-depth=1 /var", "ps aux", "ps -ef", "ps -o pid,comm -p 1", "ps axo pid,comm",
		"free -m", "uname -a", "id -u", "stat -c %s f", "wc -l f", "cut -d: -f1 /etc/passwd", "tr a-z A-Z", "diff -u a b",
		"cmp -s a b", "jq -r --arg x 1 .a f", "md5sum -c sums", "lsof -i :80", "lsof +D /var/log", "lsblk -f", "findmnt -T /",
		"systemctl status nginx --no-pager", "systemctl list-units --type=service --state=failed", "nslookup -type=mx example.com",
		"dig +short example.com", "host -t a example.com", "ping -c 1 127.0.0.1", "getent hosts localhost", "realpath -e .",
		"readlink -f /proc/self/exe", "basename -s .go a.go", "lscpu -J", "vmstat 1 2", "iostat -xz 1 1", "mpstat -P ALL 1 1",
		"top -b -n1", "netstat -tlnp", "which -a ls", "command -v rm", "env", "printenv PATH", "test -v HOME",
	} {
		if ok, why := ro.Proves(Analyze(line)); !ok {
			t.Errorf("%q is not read-only: %s", line, why)
		}
	}
}

// Every table compiles and its marked options are ones it lists.
func TestOptionTablesAreWellFormed(t *testing.T) {
	for name, tb := range optTables {
		for opt := range tb.unsafe {
			_, short := tb.short[opt[len(opt)-1]]
			if _, long := tb.long[opt]; !long && !(len(opt) == 2 && short) {
				t.Errorf("%s: marked option %s is not in the table", name, opt)
			}
		}
	}
	for _, p := range BuiltinReadOnly {
		name := strings.Fields(p)[0]
		if optTables[name] == nil && !map[string]bool{"echo": true, "printf": true, "true": true, "false": true, "test": true,
			"[": true, "ip": true, "find": true}[name] {
			t.Errorf("%s is on the read-only list without an option table", name)
		}
	}
}
