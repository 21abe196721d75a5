package shellscan

import (
	"strings"
	"testing"
)

func names(a *Analysis) string {
	var out []string
	for _, c := range a.Commands {
		if !c.Wrapper {
			out = append(out, c.String())
		}
	}
	return strings.Join(out, "; ")
}

func TestAnalyzeSeesThroughSpellingAndWrappers(t *testing.T) {
	for src, want := range map[string]string{
		`r''m -rf /srv/x`:                       "rm -rf /srv/x",
		`"r"\m -f a`:                            "rm -f a",
		`$'\x72\u006d' a`:                       "rm a",
		`{rm,-rf,/srv/x}`:                       "rm -rf /srv/x",
		`/usr/bin/rm a`:                         "/usr/bin/rm a",
		`sudo -u root -- env -i nice -n 5 rm a`: "rm a via sudo, env, nice",
		`timeout -s KILL 5 stdbuf -oL ionice -c3 rm a`: "rm a via timeout, stdbuf, ionice",
		`bash -c "sh -c 'rm a'"`:                       "rm a via bash -c, sh -c",
		`echo $(rm a) ` + "`rm b`":                     "rm a via $(...); rm b via $(...); echo $(rm a) `rm b`",
		`cat <(rm a)`:                                  "rm a via process substitution; cat <(rm a)",
		`f() { rm a; }`:                                "rm a via function f",
		`find . -name x -exec rm -f {} \;`:             "rm -f {} via find -exec",
		`ls | xargs -0 rm`:                             "ls; rm <input> via xargs",
		`eval 'rm a'`:                                  "rm a via eval",
		`sh <<'E'` + "\nrm a\nE":                       "rm a via sh reading a here-document",
		`bash <<< 'rm a'`:                              "rm a via bash reading a here-string",
		`ssh db1 sudo systemctl stop pg`:               "systemctl stop pg via ssh, sudo",
		`kubectl exec web -- rm a`:                     "kubectl exec web -- rm a; rm a via kubectl exec",
		`env -S 'rm -rf a'`:                            "rm -rf a via env -S",
		`su -c 'rm a'`:                                 "rm a via su -c",
		`alias x='rm -rf'`:                             "rm -rf via alias x",
		`command -v rm`:                                "command -v rm",
	} {
		if got := names(Analyze(src)); got != want {
			t.Errorf("%q:\n got  %s\n want %s", src, got, want)
		}
	}
}

func TestAnalyzeFailsClosed(t *testing.T) {
	for _, src := range []string{
		`$X -rf a`, `"$(echo rm)" a`, "`echo rm` a", `r${E}m a`, `eval "$CMD"`, `sh -c "$CMD"`, `echo x | sh`,
		`base64 -d <<< cm0= | bash`, `python3 -c 'import os'`, `perl -e 'unlink 1'`, `node -e 1`, `sh < script.sh`,
		`awk 'BEGIN{system("x")}'`, `sed 's/a/b/e' f`, `source <(cat x)`, `xargs -I{} {} a`, `find . -exec {} \;`,
		`echo rm a > x.sh; sh x.sh`, `if`, `a |`, `$(`, `/bin/ba?h -c 'rm a'`, strings.Repeat("$(", 50) + "x",
		`tar xf a.tar --to-command="$C"`, `/lib64/ld-linux-x86-64.so.2 "$P" x`, `cp /bin/rm ./safe; ./safe x`,
		`ln -s /usr/bin/rm /usr/local/bin/tidy && tidy x`, `hash -p /bin/rm ls; ls x`, `enable -f ./x.so ls`,
		`mapfile -C 'rm x' -c 1 < f`, `BASH_ENV=x.sh bash -c ls`, `LD_PRELOAD=./x.so ls`, `x='$(rm y)'; echo ${x@P}`,
		`x='a[$(rm y)]'; echo $((x))`, `read x; (( x > 1 ))`, `for v in $(cat f); do let v+1; done`,
		`git -c core.sshCommand=x fetch`, `vim -c '!x'`,
	} {
		if a := Analyze(src); !a.IsOpaque() {
			t.Errorf("%q is not opaque: %s", src, a.Summary())
		}
	}
}

func TestPatterns(t *testing.T) {
	for _, tc := range []struct {
		pat, src string
		want     bool
	}{
		{"rm", "/bin/rm -rf x", true},
		{"rm", "/bin/r[m] x", true},
		{"rm", "grep rm x", false},
		{"systemctl stop *", "systemctl stop nginx --now", true},
		{"systemctl stop *", "systemctl status nginx", false},
		{"kill * 1", "kill -9 1", true},
		{"kill * 1", "kill -9 12", false},
		{"kill * 1", "kill $SIG $PID", true}, // unknown arguments can be anything
		{"mkfs*", "mkfs.ext4 /dev/sdb", true},
		{"find !-delete *", "find . -delete", false},
		{"find !-delete *", "find . -name x", true},
		{"hostname !*", "hostname", true},
		{"hostname !*", "hostname evil", false},
	} {
		p, err := ParsePattern(tc.pat)
		if err != nil {
			t.Fatal(err)
		}
		a := Analyze(tc.src)
		got := false
		for i := range a.Commands {
			got = got || p.Match(&a.Commands[i], false)
		}
		if got != tc.want {
			t.Errorf("%q on %q: %v, want %v", tc.pat, tc.src, got, tc.want)
		}
	}
}

func TestReadOnlyProofIsStrict(t *testing.T) {
	ro, err := NewReadOnly([]string{"kubectl top *"})
	if err != nil {
		t.Fatal(err)
	}
	for src, want := range map[string]bool{
		"df -h; uptime; free -m": true, "ps aux | grep nginx | wc -l": true, "sudo journalctl -u nginx --since today": true,
		"kubectl get pods -A": true, "kubectl top nodes": true, "systemctl status nginx": true,
		"df -h > out.txt": false, "journalctl --vacuum-size=1M": false, "find . -delete": false, "find . $X": false,
		"kubectl $VERB pods": false, "sort -o out x": false, "systemctl restart nginx": false, "df; $CMD": false,
		"hostname": true, "hostname evil": false, "PATH=./bin ls": false, "export LD_PRELOAD=x.so; ls": false,
		"env PATH=. ls": false, "X=1 ls": true, "git log": false, "/usr/bin/time -o out df": false, "f(){ df; }; f": false, "./check.sh": false, "echo $(rm x)": false,
	} {
		if got, why := ro.Proves(Analyze(src)); got != want {
			t.Errorf("%q: %v (%s), want %v", src, got, why, want)
		}
	}
}

func TestCatalogAdditions(t *testing.T) {
	cat, err := NewCatalog(map[string][]string{"restarts_services": {"systemctl restart *", "service * restart"}})
	if err != nil {
		t.Fatal(err)
	}
	if !Has(cat.Effects(Analyze("sudo systemctl restart nginx")), "restarts_services") {
		t.Fatal("added category not applied")
	}
	if _, err := NewCatalog(map[string][]string{"Bad": {"x"}}); err == nil {
		t.Fatal("bad category name accepted")
	}
}
