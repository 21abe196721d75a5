package shellscan

import (
	"strings"
	"testing"
)

// Wrappers and xargs read their options as their manuals define them: the
// command they run is found whatever the spelling, and an option the table
// does not know makes the call opaque instead of guessing.
func TestWrappersFindTheCommandInEveryGNUSpelling(t *testing.T) {
	for src, want := range map[string]string{
		`env -iS'rm -rf a'`:                             "rm -rf a via env -S",
		`env -vS'rm a'`:                                 "rm a via env -S",
		`env -i0vS 'rm a'`:                              "rm a via env -S",
		`env --sp='rm a'`:                               "rm a via env -S",
		`env --split='rm a'`:                            "rm a via env -S",
		`env -u HOME -C / rm a`:                         "rm a via env",
		`env --unset=HOME --ch=/ rm a`:                  "rm a via env",
		`env - rm a`:                                    "rm a via env",
		`timeout -s9 5 rm a`:                            "rm a via timeout",
		`timeout -s 9 5 rm a`:                           "rm a via timeout",
		`timeout --sig=KILL 5 rm a`:                     "rm a via timeout",
		`timeout --sig KILL 5 rm a`:                     "rm a via timeout",
		`timeout -vk5 10 rm a`:                          "rm a via timeout",
		`timeout --kill 5 10 rm a`:                      "rm a via timeout",
		`timeout --pres --fore 5 rm a`:                  "rm a via timeout",
		`nice -n5 rm a`:                                 "rm a via nice",
		`nice --adj=5 rm a`:                             "rm a via nice",
		`nice --adj 5 rm a`:                             "rm a via nice",
		`nice -10 rm a`:                                 "rm a via nice",
		`stdbuf -o0 -eL rm a`:                           "rm a via stdbuf",
		`stdbuf --out 0 rm a`:                           "rm a via stdbuf",
		`ionice -c 3 rm a`:                              "rm a via ionice",
		`ionice -tc3 rm a`:                              "rm a via ionice",
		`ionice --class 3 -n 7 rm a`:                    "rm a via ionice",
		`flock -n /tmp/l rm a`:                          "rm a via flock",
		`flock -xw 5 /tmp/l rm a`:                       "rm a via flock",
		`flock --time 5 /tmp/l rm a`:                    "rm a via flock",
		`flock -xc 'rm a' /tmp/l`:                       "rm a via flock -c",
		`strace -fo /dev/null rm a`:                     "rm a via strace",
		`strace -f -e trace=file rm a`:                  "rm a via strace",
		`strace --output=/dev/null --follow-forks rm a`: "rm a via strace",
		`strace -s 99 -qq rm a`:                         "rm a via strace",
		`setpriv --reuid 0 rm -rf a`:                    "rm -rf a via setpriv",
		`setpriv --reuid=0 --clear-groups rm a`:         "rm a via setpriv",
		`setpriv --nnp --inh-caps -all rm a`:            "rm a via setpriv",
		`xargs -0I{} rm {}`:                             "rm {} via xargs",
		`xargs -tn 1 rm`:                                "rm <input> via xargs",
		`xargs -a list rm`:                              "rm <input> via xargs",
		`xargs -P4 -n1 rm`:                              "rm <input> via xargs",
		`xargs --max-a=1 rm`:                            "rm <input> via xargs",
		`xargs --max-a 1 rm`:                            "rm <input> via xargs",
		`xargs --arg-f list rm`:                         "rm <input> via xargs",
		`xargs -d '\n' rm`:                              "rm <input> via xargs",
		`xargs -E END rm`:                               "rm <input> via xargs",
		`xargs -rL 1 rm`:                                "rm <input> via xargs",
	} {
		a := Analyze(src)
		if got := names(a); got != want {
			t.Errorf("%q:\n got  %s\n want %s", src, got, want)
		}
		if !Has(DefaultCatalog.Effects(a), DeletesFiles) && !a.IsOpaque() {
			t.Errorf("%q: the rm it runs is not seen as deleting files", src)
		}
	}
	for _, src := range []string{
		`timeout --bogus 5 rm a`, `env --bogus rm a`, `env -Q rm a`, `nice -Q rm a`, `stdbuf -Q rm a`, `ionice -Q rm a`,
		`flock -Q /tmp/l rm a`, `strace -Q rm a`, `setpriv --bogus 0 rm a`, `xargs -Q rm`, `xargs --bogus rm`,
		`xargs -0I{} sh -c {}`, `xargs -i sh -c '{}'`, `sudo -Q rm a`, `sudo --bogus rm a`, `doas -Q rm a`, `nohup --bogus rm a`,
		`setsid -Q rm a`, `command -Q rm a`,
	} {
		a := Analyze(src)
		if !a.IsOpaque() {
			t.Errorf("%q is not opaque: %s", src, a.Summary())
		} else if strings.Contains(src, "Q") || strings.Contains(src, "bogus") {
			if !strings.Contains(a.Opaque[0].Reason, "unknown option") {
				t.Errorf("%q: opaque for %q, want it to name the unknown option", src, a.Opaque[0].Reason)
			}
		}
	}
}

// A shell that reads start-up files, and builtins that evaluate a
// subscript as code, are never read-only; the commands in a literal
// subscript are seen. kill -0 $$ only checks that the shell exists.
func TestLoginShellsBuiltinsAndSignalZero(t *testing.T) {
	ro, err := NewReadOnly(nil)
	if err != nil {
		t.Fatal(err)
	}
	for line, want := range map[string]string{
		"bash -l -c true": "login or interactive", "bash --login -c true": "login", "bash --log -c true": "login",
		"bash -i -c true": "interactive", "bash -il -c true": "login", "bash -lic true": "login", "sh -l -c true": "login",
		"dash -i -c true": "login", "zsh -l -c true": "login", "bash --rcfile x -c true": "start-up", "bash --init-file=x -c ls": "start-up",
		"su - -c true": "su -", "su -l -c true": "su -l", "su --login -c true": "su --login", "sudo -i true": "sudo -i",
		"sudo --login true": "sudo --login", "runuser -l u -c true": "runuser -l", "exec -l bash -c true": "exec -l",
		"exec -a -bash bash -c true": "exec -a",
		"test -v 'a[$(touch m)]'":    "evaluates the subscript", "[ -v 'a[$(touch m)]' ]": "evaluates the subscript",
		"[[ -v 'a[$(touch m)]' ]]": "evaluates the subscript", "test -R 'a[x]'": "evaluates", "printf -v 'a[$(touch m)]' x": "evaluates",
		"printf -v'a[$(touch m)]' x": "evaluates", "test -v \"$name\"": "known only at run time",
		"unset 'a[$(touch m)]'": "", "read 'a[$(touch m)]'": "", "declare 'a[$(touch m)]=1'": "", "export 'a[$(touch m)]=1'": "",
		"mapfile 'a[$(touch m)]' < f": "",
	} {
		a := Analyze(line)
		ok, why := ro.Proves(a)
		if ok {
			t.Errorf("%q is read-only (%s)", line, why)
		} else if !strings.Contains(why, want) {
			t.Errorf("%q: refused as %q, want %q", line, why, want)
		}
	}
	a := Analyze("test -v 'a[$(rm -rf /srv/x)]'")
	if !Has(DefaultCatalog.Effects(a), DeletesFiles) {
		t.Errorf("the rm in a test -v subscript is not seen: %s", a.Summary())
	}
	for _, line := range []string{"test -v HOME", "[ -v HOME ]", "test -v 'a[1]'", "bash -c 'test -v HOME'",
		"bash -c 'echo hi'", "bash -e -c 'ls'", "sh -c 'ls -l'", "env -i ls", "timeout 5 ls", "nice -n 5 uptime"} {
		if ok, why := ro.Proves(Analyze(line)); !ok {
			t.Errorf("%q is not read-only: %s", line, why)
		}
	}
	for line, stops := range map[string]bool{"kill -0 $$": false, `kill -0 "$$"`: false, "kill -s 0 $$": false, "kill -0 $BASHPID": false,
		"kill -0 1": true, "kill -0 -1": true, "kill -9 $$ 1": true, "kill -0 $$ 1": true, "kill -9 1": true, "kill -TERM -1": true,
		"kill -0 $pid": true} {
		if got := Has(DefaultCatalog.Effects(Analyze(line)), StopsHost); got != stops {
			t.Errorf("%q: stops_host %v, want %v", line, got, stops)
		}
	}
}

// ssh -o runs the commands its options name on this host, in each of the
// forms ssh accepts (-oKey=value, -o 'Key value', in a cluster).
func TestSSHCommandOptionsAreFollowed(t *testing.T) {
	for _, src := range []string{`ssh -o ProxyCommand='rm -rf /srv/x' h`, `ssh -oProxyCommand='rm -rf /srv/x' h`,
		`ssh -o 'ProxyCommand rm -rf /srv/x' h`, `ssh -vo ProxyCommand='rm -rf /srv/x' h`, `ssh -o proxycommand='rm -rf /srv/x' h`,
		`ssh -o LocalCommand='rm -rf /srv/x' -o PermitLocalCommand=yes h`} {
		if a := Analyze(src); !Has(DefaultCatalog.Effects(a), DeletesFiles) {
			t.Errorf("%q: the rm its option runs is not seen: %s", src, a.Summary())
		}
	}
	if a := Analyze(`ssh -o "$OPT" h`); !a.IsOpaque() {
		t.Errorf("ssh -o with a run-time option is not opaque: %s", a.Summary())
	}
	if a := Analyze(`ssh -o ConnectTimeout=5 h uptime`); a.IsOpaque() || len(DefaultCatalog.Effects(a)) > 0 {
		t.Errorf("a harmless ssh -o is refused: %s", a.Summary())
	}
}

// The rarer wrappers (chroot, taskset, nsenter, unshare, su, watch) read
// their whole option tables too: the command is found in their spellings,
// and an option their manuals do not list makes the call opaque.
func TestRarerWrappersReadTheirManuals(t *testing.T) {
	for src, want := range map[string]string{
		`chroot / rm a`: "rm a via chroot",
		`chroot --userspec=0:0 --skip-chdir / rm a`:           "rm a via chroot",
		`chroot --groups 0 / rm a`:                            "rm a via chroot",
		`taskset 0x1 rm a`:                                    "rm a via taskset",
		`taskset -ac 0-1 rm a`:                                "rm a via taskset",
		`taskset --cpu-list 0 rm a`:                           "rm a via taskset",
		`nsenter -t 1 -m -u -i -n -p rm a`:                    "rm a via nsenter",
		`nsenter -at1 rm a`:                                   "rm a via nsenter",
		`nsenter --target=1 --mount --wd rm a`:                "rm a via nsenter",
		`nsenter -t 1 -m -w rm a`:                             "rm a via nsenter",
		`nsenter -S 0 -G0 -W /srv -t 1 rm a`:                  "rm a via nsenter",
		`unshare -r rm a`:                                     "rm a via unshare",
		`unshare -mUr --propagation private rm a`:             "rm a via unshare",
		`unshare --map-root-user --fork --pid rm a`:           "rm a via unshare",
		`unshare -R /srv -w / rm a`:                           "rm a via unshare",
		`unshare --kill-child=KILL -f rm a`:                   "rm a via unshare",
		`su -c 'rm a'`:                                        "rm a via su -c",
		`su root -c 'rm a'`:                                   "rm a via su -c",
		`su -s /bin/sh --session-command='rm a' root`:         "rm a via su -c",
		`su -mc 'rm a' root`:                                  "rm a via su -c",
		`watch 'rm a'`:                                        "rm a via watch",
		`watch -n 5 rm a`:                                     "rm a via watch",
		`watch -tn1 rm a`:                                     "rm a via watch",
		`watch -x rm a`:                                       "rm a via watch",
		`watch -bx --interval=2 rm a`:                         "rm a via watch",
		`watch --exec --differences=permanent rm a`:           "rm a via watch",
		`/usr/bin/time -f %e rm a`:                            "rm a via time",
		`/usr/bin/time -vao /dev/null rm a`:                   "rm a via time",
		`/usr/bin/time --portability --output=/dev/null rm a`: "rm a via time",
		`pkexec --user root --keep-cwd rm a`:                  "rm a via pkexec",
		`runuser -u svc -- rm a`:                              "rm a via runuser",
		`runuser -u svc -m rm a`:                              "rm a via runuser",
		`runuser svc -c 'rm a'`:                               "rm a via runuser -c",
		`runuser --session-command='rm a' svc`:                "rm a via runuser -c",
		`chrt -b 0 rm a`:                                      "rm a via chrt",
		`chrt -f 10 rm a`:                                     "rm a via chrt",
		`chrt -d -T 1000 -P 2000 -D 2000 0 rm a`:              "rm a via chrt",
		`chrt --rr --reset-on-fork 5 rm a`:                    "rm a via chrt",
		`ssh -P tag h rm a`:                                   "rm a via ssh",
		`ssh -4Ttq -p 22 h rm a`:                              "rm a via ssh",
		`script -qec 'rm a' /dev/null`:                        "rm a via script -c",
		`script -B /dev/null -c 'rm a'`:                       "rm a via script -c",
		`script --log-io /dev/null --command 'rm a'`:          "rm a via script -c",
	} {
		a := Analyze(src)
		if got := names(a); got != want {
			t.Errorf("%q:\n got  %s\n want %s", src, got, want)
		}
		if !Has(DefaultCatalog.Effects(a), DeletesFiles) && !a.IsOpaque() {
			t.Errorf("%q: the rm it runs is not seen as deleting files", src)
		}
	}
	for _, src := range []string{`chroot -Q / rm a`, `chroot --bogus / rm a`, `taskset -Q 1 rm a`, `nsenter -Q rm a`,
		`nsenter -m/proc/1/ns/mnt rm a`, `unshare -Q rm a`, `unshare --bogus rm a`, `su -Q root`, `su --bogus root`, `watch -Q rm a`,
		`chrt -Q 0 rm a`, `chrt --bogus 0 rm a`, `ssh -Z h rm a`, `watch --bogus rm a`, `/usr/bin/time -Q rm a`, `pkexec --bogus rm a`, `runuser -Q svc`, `script -Q`} {
		a := Analyze(src)
		if !a.IsOpaque() {
			t.Errorf("%q is not opaque: %s", src, a.Summary())
		}
	}
	for _, src := range []string{`chrt -p 5 1234`, `chrt -m`, `chrt --pid 0 rm`} {
		if a := Analyze(src); strings.Contains(names(a), "via chrt") || Has(DefaultCatalog.Effects(a), DeletesFiles) {
			t.Errorf("%q runs no command, got %s", src, names(a))
		}
	}
	// taskset -p changes a running process: it starts no command.
	if a := Analyze(`taskset -p 0x1 rm`); strings.Contains(names(a), "via taskset") || Has(DefaultCatalog.Effects(a), DeletesFiles) {
		t.Errorf("taskset -p runs no command, got %s", names(a))
	}
}

// The rarer wrappers with a whole table: the command is found in each
// spelling, and an option not in the table is unknown, not guessed.
func TestRarerWrappersReadTheirWholeTables(t *testing.T) {
	for src, want := range map[string]string{
		`prlimit --nofile=1024 rm a`:                "rm a via prlimit",
		`prlimit --nof=1024:2048 --as rm a`:         "rm a via prlimit",
		`prlimit -n rm a`:                           "rm a via prlimit",
		`prlimit -o RESOURCE --raw rm a`:            "rm a via prlimit",
		`fakeroot -u -s /dev/null rm a`:             "rm a via fakeroot",
		`fakeroot --lib /x.so --fd-base=9 rm a`:     "rm a via fakeroot",
		`fakeroot -- rm a`:                          "rm a via fakeroot",
		`eatmydata rm a`:                            "rm a via eatmydata",
		`nocache rm a`:                              "rm a via nocache",
		`catchsegv rm a`:                            "rm a via catchsegv",
		`chronic -ev rm a`:                          "rm a via chronic",
		`unbuffer -p rm a`:                          "rm a via unbuffer",
		`dbus-run-session --config-file=/x rm a`:    "rm a via dbus-run-session",
		`dbus-run-session --dbus-daemon /x -- rm a`: "rm a via dbus-run-session",
		`proxychains4 -qf /etc/p.conf rm a`:         "rm a via proxychains4",
		`xvfb-run -a -s '-screen 0 1x1x8' rm a`:     "rm a via xvfb-run",
		`xvfb-run --server-args=-ac --wait 0 rm a`:  "rm a via xvfb-run",
		`cgexec -g cpu:/x --sticky rm a`:            "rm a via cgexec",
		`sshpass -e ssh h`:                          "ssh h via sshpass",
		`sshpass -p secret ssh h`:                   "ssh h via sshpass",
		`daemonize -a -o /dev/null -c / /bin/rm a`:  "/bin/rm a via daemonize",
		`trickle -s -d 100 rm a`:                    "rm a via trickle",
		`setuidgid nobody rm a`:                     "rm a via setuidgid",
		`envdir /etc/env rm a`:                      "rm a via envdir",
		`softlimit -m 1000 -p 5 rm a`:               "rm a via softlimit",
		`lckdo -w -W 5 /tmp/l rm a`:                 "rm a via lckdo",
		`with-lock-ex -q /tmp/l rm a`:               "rm a via with-lock-ex",
		`entr -rc rm a`:                             "rm a via entr",
		`caffeinate -i -t 60 rm a`:                  "rm a via caffeinate",
		`systemd-run --scope -p MemoryMax=1G rm a`:  "rm a via systemd-run",
		`systemd-run -qPu job --on-cal=daily rm a`:  "rm a via systemd-run",
		`systemd-run -pCPUQuota=10% --wait rm a`:    "rm a via systemd-run",
		`systemd-run -E A=1 --uid=0 -- rm a`:        "rm a via systemd-run",
		`numactl --interleave=all rm a`:             "rm a via numactl",
		`numactl -N 0 -m 0 rm a`:                    "rm a via numactl",
		`numactl --cpunod 0 --localalloc rm a`:      "rm a via numactl",
		`numactl -C0-3 rm a`:                        "rm a via numactl",
		`chpst -u nobody -/ /srv -v rm a`:           "rm a via chpst",
		`chpst -m 100000 -o 10 rm a`:                "rm a via chpst",
	} {
		a := Analyze(src)
		if got := names(a); got != want {
			t.Errorf("%q:\n got  %s\n want %s", src, got, want)
		}
	}
	for _, src := range []string{`prlimit -Q rm a`, `prlimit --bogus rm a`, `prlimit -n1024 rm a`, `fakeroot -Q rm a`, `eatmydata -Q rm a`,
		`nocache --bogus rm a`, `catchsegv -Q rm a`, `chronic -Q rm a`, `unbuffer -Q rm a`, `dbus-run-session --bogus rm a`,
		`proxychains -Q rm a`, `xvfb-run -Q rm a`, `cgexec -Q rm a`, `sshpass -Q rm a`, `sshpass -eVAR ssh h`, `daemonize -Q rm a`,
		`trickle -Q rm a`, `softlimit -Q rm a`, `lckdo -Q /tmp/l rm a`, `with-lock-ex -Q /tmp/l rm a`, `entr -s 'rm a'`,
		`caffeinate -Q rm a`, `setuidgid -Q nobody rm a`, `systemd-run -Q rm a`, `systemd-run --bogus rm a`,
		`numactl -Q rm a`, `numactl --bogus rm a`, `chpst -Q rm a`} {
		if a := Analyze(src); !a.IsOpaque() || !strings.Contains(a.Opaque[0].Reason, "unknown option") {
			t.Errorf("%q: want opaque for an unknown option, got %s", src, a.Summary())
		}
	}
	for _, src := range []string{`systemd-run -p ExecStartPre='/bin/rm -rf /x' true`, `systemd-run --property=ExecStopPost=/x true`,
		`systemd-run -pExecStartPost=/x true`, `systemd-run -S`, `systemd-run --shell`, `systemd-run --timer-property ExecStart=/x true`} {
		if a := Analyze(src); !a.IsOpaque() {
			t.Errorf("%q: want opaque (a command of the unit's own, or a shell), got %s", src, a.Summary())
		}
	}
	if a := Analyze(`numactl --hardware`); a.IsOpaque() {
		t.Errorf("numactl --hardware: %s", a.Summary())
	}
	// prlimit -p changes a running process and starts nothing.
	if a := Analyze(`prlimit -p 1 --nofile=1:1`); a.IsOpaque() || strings.Contains(names(a), "via prlimit") {
		t.Errorf("prlimit -p: %s", names(a))
	}
}
