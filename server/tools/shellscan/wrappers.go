package shellscan

import (
	"slices"
	"strings"
)

// wrapSpec says how a wrapper's own options and operands come before the
// command it runs.
type wrapSpec struct {
	values   string   // short options that take a value (-u USER)
	long     []string // long options that take a value unless written --opt=value
	operands int      // operands before the command (timeout DURATION)
	joins    bool     // the rest of the words are joined into one shell string (ssh, watch)
	codeOpt  string   // a short option whose value is shell code (su -c, flock -c)
	// runsNothing and runsNothingLong are the options after which the
	// wrapper starts no command (command -v, taskset -p PID, chrt -m).
	runsNothing     string
	runsNothingLong []string
	// complete: flags and longFlags list every other option the wrapper
	// has (from its manual), so an option in none of the lists is unknown
	// and the command it runs cannot be found: the call is opaque.
	complete  bool
	flags     string   // short options without a value
	longFlags []string // long options without a value
}

// wrappers run the command that follows their options.
var wrappers = map[string]wrapSpec{
	"sudo": {values: "ugpCDhrtTUR", long: []string{"--user", "--group", "--prompt", "--close-from", "--chdir", "--host", "--role", "--type", "--other-user", "--command-timeout", "--chroot"},
		complete: true, flags: "AbBEeHiKklnNPSsVv", longFlags: []string{"--askpass", "--background", "--bell", "--preserve-env", "--edit",
			"--help", "--set-home", "--login", "--remove-timestamp", "--reset-timestamp", "--list", "--non-interactive", "--preserve-groups",
			"--stdin", "--shell", "--version", "--validate"}},
	"doas":   {values: "uC", complete: true, flags: "Lns"},
	"pkexec": {long: []string{"--user"}, complete: true, longFlags: []string{"--keep-cwd", "--disable-internal-agent", "--help", "--version"}},
	"env": {values: "uCS", long: []string{"--unset", "--chdir", "--split-string"}, complete: true, flags: "i0v",
		longFlags: []string{"--ignore-environment", "--null", "--debug", "--block-signal", "--default-signal", "--ignore-signal", "--list-signal-handling", "--help", "--version"}},
	"nice": {values: "n", long: []string{"--adjustment"}, complete: true, longFlags: []string{"--help", "--version"}},
	"ionice": {values: "cnpPu", long: []string{"--class", "--classdata", "--pid", "--pgid", "--uid"}, complete: true, flags: "thV",
		longFlags: []string{"--ignore", "--help", "--version"}},
	"timeout": {values: "sk", long: []string{"--signal", "--kill-after"}, operands: 1, complete: true, flags: "v",
		longFlags: []string{"--preserve-status", "--foreground", "--verbose", "--help", "--version"}},
	"stdbuf": {values: "ioe", long: []string{"--input", "--output", "--error"}, complete: true, longFlags: []string{"--help", "--version"}},
	"nohup":  {complete: true, longFlags: []string{"--help", "--version"}},
	"setsid": {complete: true, flags: "cfwhV", longFlags: []string{"--ctty", "--fork", "--wait", "--help", "--version"}},
	"time": {values: "fo", long: []string{"--format", "--output"}, complete: true, flags: "pavqV",
		longFlags: []string{"--portability", "--append", "--verbose", "--quiet", "--help", "--version"}},
	"command": {complete: true, flags: "pvV", runsNothing: "vV"},
	"builtin": {},
	"exec":    {values: "a", complete: true, flags: "cl"},
	"chroot":  {long: []string{"--userspec", "--groups"}, operands: 1, complete: true, longFlags: []string{"--skip-chdir", "--help", "--version"}},
	"flock": {values: "wEc", long: []string{"--timeout", "--conflict-exit-code", "--command"}, operands: 1, codeOpt: "c", complete: true,
		flags: "sxeunoFhV", longFlags: []string{"--shared", "--exclusive", "--unlock", "--nonblock", "--nb", "--close", "--no-fork", "--verbose", "--help", "--version"}},
	"taskset": {operands: 1, complete: true, flags: "acphV", longFlags: []string{"--all-tasks", "--cpu-list", "--pid", "--help", "--version"},
		runsNothing: "p", runsNothingLong: []string{"--pid"}},
	"chrt": {values: "TPD", long: []string{"--sched-runtime", "--sched-period", "--sched-deadline"}, operands: 1, complete: true,
		flags: "abdefioRrmpvhV", longFlags: []string{"--all-tasks", "--batch", "--deadline", "--ext", "--fifo", "--idle", "--other", "--rr",
			"--reset-on-fork", "--max", "--pid", "--verbose", "--help", "--version"}, runsNothing: "pm", runsNothingLong: []string{"--pid", "--max"}},
	"numactl": {values: "ipPmNCoMLISfw", long: []string{"--interleave", "--preferred", "--preferred-many", "--membind", "--cpunodebind",
		"--cpubind", "--physcpubind", "--offset", "--shmmode", "--length", "--shmid", "--shm", "--file", "--weighted-interleave"},
		complete: true, flags: "alsHutTdDbVh", longFlags: []string{"--all", "--localalloc", "--show", "--hardware", "--huge", "--strict",
			"--touch", "--dump", "--dump-nodes", "--balancing", "--version", "--help"},
		runsNothing: "sH", runsNothingLong: []string{"--show", "--hardware"}},
	"unbuffer": {complete: true, flags: "p"},
	"strace": {values: "oeEpPsSuUIabXO", long: []string{"--output", "--expr", "--env", "--user", "--attach", "--trace-path", "--string-limit",
		"--columns", "--summary-sort-by", "--summary-columns", "--interruptible", "--const-print-style", "--detach-on", "--argv0", "--trace",
		"--trace-fds", "--signal", "--status", "--quiet", "--silent", "--raw", "--read", "--write", "--fault", "--inject", "--kvm", "--decode-fds",
		"--decode-pids", "--absolute-timestamps", "--timestamps", "--relative-timestamps", "--syscall-times", "--tips", "--secontext", "--namespace"},
		complete: true, flags: "AcCdDfFhiknNqrtTvVwxyYzZ", longFlags: []string{"--follow-forks", "--output-separately", "--summary-only",
			"--summary", "--summary-wall-clock", "--stack-trace", "--stack-traces", "--instruction-pointer", "--no-abbrev", "--seccomp-bpf",
			"--kill-on-exit", "--daemonize", "--debug", "--help", "--version", "--failed-only", "--successful-only", "--strings-in-hex",
			"--syscall-number", "--always-show-pid", "--output-append-mode", "--verbose"}},
	"ltrace": {values: "oeEpsun", long: []string{"--output"}},
	// nsenter's and unshare's namespace options take a file only when it
	// is attached (-m/proc/1/ns/mnt, --mount=FILE): a detached word is the
	// command. An attached short one reads as unknown flags: opaque.
	"nsenter": {values: "tSGWN", long: []string{"--target", "--setuid", "--setgid", "--wdns", "--net-socket"}, complete: true,
		flags: "amuinpCUTrweFZchV", longFlags: []string{"--all", "--mount", "--uts", "--ipc", "--net", "--pid", "--cgroup", "--user", "--time",
			"--user-parent", "--preserve-credentials", "--root", "--wd", "--env", "--no-fork", "--follow-context", "--join-cgroup", "--help", "--version"}},
	"unshare": {values: "RwSGl", long: []string{"--root", "--wd", "--setuid", "--setgid", "--map-user", "--map-group", "--map-users",
		"--map-groups", "--propagation", "--setgroups", "--monotonic", "--boottime", "--load-interp"}, complete: true, flags: "muinpUCTfrchV",
		longFlags: []string{"--mount", "--uts", "--ipc", "--net", "--pid", "--user", "--cgroup", "--time", "--fork", "--kill-child",
			"--mount-proc", "--map-root-user", "--map-current-user", "--map-auto", "--keep-caps", "--help", "--version"}},
	"runuser": {values: "ugGcsw", long: []string{"--user", "--group", "--supp-group", "--command", "--session-command", "--shell",
		"--whitelist-environment"}, codeOpt: "c", operands: 1, complete: true, flags: "flmpPhV", longFlags: []string{"--fast", "--login",
		"--preserve-environment", "--pty", "--help", "--version"}},
	"su": {values: "cgGsw", long: []string{"--command", "--session-command", "--group", "--supp-group", "--shell", "--whitelist-environment"},
		codeOpt: "c", operands: 1, complete: true, flags: "flmpPhV", longFlags: []string{"--fast", "--login", "--preserve-environment", "--pty",
			"--help", "--version"}},
	"sg": {values: "c", operands: 1, codeOpt: "c"},
	"setpriv": {long: []string{"--reuid", "--regid", "--ruid", "--rgid", "--euid", "--egid", "--groups", "--inh-caps", "--ambient-caps",
		"--bounding-set", "--securebits", "--pdeathsig", "--selinux-label", "--apparmor-profile", "--landlock-access", "--landlock-rule",
		"--seccomp-filter", "--ptracer"}, complete: true, flags: "dhV", longFlags: []string{"--dump", "--clear-groups", "--keep-groups",
		"--init-groups", "--nnp", "--no-new-privs", "--reset-env", "--help", "--version"}},
	// systemd-run (systemd 252's options; a newer one is unknown, so
	// opaque): a unit property may run commands of its own
	// (-p ExecStartPre=...) and --shell starts a shell: both opaque.
	"systemd-run": {values: "HMupE", long: []string{"--host", "--machine", "--unit", "--property", "--description", "--slice",
		"--service-type", "--uid", "--gid", "--nice", "--working-directory", "--setenv", "--path-property", "--socket-property",
		"--on-active", "--on-boot", "--on-startup", "--on-unit-active", "--on-unit-inactive", "--on-calendar", "--timer-property"},
		complete: true, flags: "hrdtPqGS", longFlags: []string{"--help", "--version", "--no-ask-password", "--user", "--scope",
			"--slice-inherit", "--no-block", "--remain-after-exit", "--wait", "--send-sighup", "--same-dir", "--pty", "--pipe", "--quiet",
			"--collect", "--shell", "--on-timezone-change", "--on-clock-change"}},
	"catchsegv":   {complete: true},
	"firejail":    {},
	"proxychains": {values: "f", complete: true, flags: "q"}, "proxychains4": {values: "f", complete: true, flags: "q"},
	"torsocks":  {values: "uPa"},
	"faketime":  {values: "f", operands: 1},
	"eatmydata": {complete: true, longFlags: []string{"--help", "--version"}},
	"fakeroot": {values: "lfisb", long: []string{"--lib", "--faked", "--fd-base"}, complete: true, flags: "uhv",
		longFlags: []string{"--unknown-is-real", "--help", "--version"}},
	"xvfb-run": {values: "efnpsw", long: []string{"--error-file", "--auth-file", "--server-num", "--xauth-protocol", "--server-args", "--wait"},
		complete: true, flags: "ahl", longFlags: []string{"--auto-servernum", "--listen-tcp", "--help"}},
	"cgexec": {values: "g", complete: true, flags: "h", longFlags: []string{"--sticky", "--help"}},
	// prlimit's resource options take their limits only attached
	// (-n1024 reads as unknown flags: opaque; --nofile=1024), so a
	// detached word is the command; -p PID changes another process.
	"prlimit": {values: "po", long: []string{"--pid", "--output"}, complete: true, flags: "cdefilmnqrstuvxyhV",
		longFlags: []string{"--core", "--data", "--nice", "--fsize", "--sigpending", "--memlock", "--rss", "--nofile", "--msgqueue",
			"--rtprio", "--stack", "--cpu", "--nproc", "--as", "--locks", "--rttime", "--noheadings", "--raw", "--verbose", "--help", "--version"},
		runsNothing: "p", runsNothingLong: []string{"--pid"}},
	// sshpass -e takes its variable's name only attached (-eVAR reads as
	// unknown flags: opaque).
	"sshpass": {values: "pfdP", complete: true, flags: "ehVv"},
	"script": {values: "cEBIOTmo", long: []string{"--command", "--echo", "--log-io", "--log-in", "--log-out", "--log-timing",
		"--logging-format", "--output-limit"}, codeOpt: "c", complete: true, flags: "aefqthV", longFlags: []string{"--append", "--return",
		"--flush", "--quiet", "--timing", "--help", "--version"}},
	// watch joins its words into one sh -c string, unless -x (--exec)
	// runs them as they are.
	"watch": {values: "nq", long: []string{"--interval", "--equexit"}, joins: true, complete: true, flags: "bcCdegprtwxhv",
		longFlags: []string{"--beep", "--color", "--no-color", "--differences", "--errexit", "--chgexit", "--precise", "--no-rerun",
			"--no-title", "--no-wrap", "--exec", "--help", "--version"}},
	"ssh":     {values: "BbcDEeFIiJLlmOoPpQRSWw", joins: true, operands: 1, complete: true, flags: "46AaCfGgKkMNnqsTtVvXxYy"},
	"busybox": {}, "toybox": {},
	"doas-keepenv": {}, "daemonize": {values: "ceElopu", complete: true, flags: "av"},
	"start-stop-daemon": {},
	"cpulimit":          {values: "lpe", long: []string{"--limit", "--pid", "--exe"}},
	"chronic":           {complete: true, flags: "ev"}, "nocache": {complete: true}, "trickle": {values: "duwtln", complete: true, flags: "hvVs"},
	"dbus-run-session": {long: []string{"--dbus-daemon", "--config-file"}, complete: true, longFlags: []string{"--help", "--version"}},
	"dbus-launch":      {},
	"chpst":            {values: "uUbemdofcrt/nlL", complete: true, flags: "vP012V"},
	"setuidgid":        {operands: 1, complete: true}, "envdir": {operands: 1, complete: true}, "softlimit": {values: "mdsltafcorp", complete: true},
	"lckdo": {values: "W", operands: 1, complete: true, flags: "wq"}, "with-lock-ex": {operands: 1, complete: true, flags: "wqf"},
	// entr -s runs its first operand as shell code: not in the table, so opaque.
	"entr":       {complete: true, flags: "acdnprxz"},
	"runcon":     {values: "utrl"},
	"caffeinate": {values: "tw", complete: true, flags: "dimsu"}, "watchexec": {values: "wef"},
}

// unitRunsCommand: a systemd unit property that names a command to run
// (ExecStartPre=, ExecStopPost=, ExecCondition=, ...).
func unitRunsCommand(property string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(property)), "exec")
}

// wrapper follows the command a wrapper runs; false when it runs none
// (command -v rm, sudo -l, env alone).
func (s *scanner) wrapper(name string, w wrapSpec, argv []arg, c ctx) bool {
	i := 1
	operands := w.operands
	var unknownAt int = -1
	shellMode := false
	execMode := false // watch -x: the words are the command itself, not joined
	unknown := func(opt string) bool {
		s.opaque(&c, nil, "unknown option "+opt+" of "+name+": cannot tell which command it runs")
		return true
	}
	for i < len(argv) {
		a := argv[i]
		if !a.lit {
			break
		}
		t := a.text
		if (name == "env" || name == "sudo") && isAssignment(t) {
			s.a.Env = append(s.a.Env, strings.SplitN(t, "=", 2)[0])
			i++
			continue
		}
		if t == "--" {
			i++
			break
		}
		if strings.HasPrefix(t, "--") {
			given, value, hasValue := strings.Cut(t, "=")
			key, takesValue, ok := w.resolveLong(given)
			if !ok {
				if w.complete {
					return unknown(given)
				}
				key = given
			}
			switch {
			case key == "--split-string" && name == "env":
				s.splitString(name, value, hasValue, argv, i, c)
				return true
			case (key == "--command" || key == "--session-command") && w.codeOpt != "":
				s.codeOption(name, argv, i, hasValue, value, c)
				return true
			case key == "--login" && loginWrappers[name]:
				s.login(name + " " + t)
			case key == "--shell" && name == "sudo":
				shellMode = true
			case key == "--user" && name == "runuser":
				operands = 0 // runuser -u USER COMMAND; without it, su's form: runuser USER [-c ...]
			case slices.Contains(w.runsNothingLong, key):
				return false
			case key == "--exec" && name == "watch":
				execMode = true
			case name == "systemd-run" && key == "--shell":
				s.opaque(&c, nil, "systemd-run --shell starts a shell: cannot tell what it runs")
				return true
			case name == "systemd-run" && strings.HasSuffix(key, "-property"):
				if !hasValue && i+1 < len(argv) {
					value = argv[i+1].text
				}
				if unitRunsCommand(value) {
					s.opaque(&c, nil, "systemd-run "+given+" "+value+": the unit runs a command of its own")
					return true
				}
			}
			i++
			if !hasValue && takesValue {
				i++
			}
			continue
		}
		if name == "nice" && strings.HasPrefix(t, "-") && isDigits(strings.TrimPrefix(t[1:], "-")) {
			i++ // the historical nice -10 form
			continue
		}
		if strings.HasPrefix(t, "-") && len(t) > 1 {
			consumed := false
			for k := 1; k < len(t); k++ {
				ch := t[k]
				switch {
				case w.codeOpt != "" && ch == w.codeOpt[0]:
					s.codeOption(name, argv, i, k+1 < len(t), t[k+1:], c)
					return true
				case name == "env" && ch == 'S':
					s.splitString(name, t[k+1:], k+1 < len(t), argv, i, c)
					return true
				case strings.IndexByte(w.runsNothing, ch) >= 0:
					return false
				case name == "sudo" && (ch == 's' || ch == 'i'):
					shellMode = true
					if ch == 'i' {
						s.login("sudo " + t)
					}
				case name == "ssh" && ch == 'o':
					// ssh -o ProxyCommand=... runs a command on this host
					switch v := t[k+1:]; {
					case v != "":
						s.sshOption(name, v, c)
					case i+1 < len(argv) && !argv[i+1].lit:
						s.opaque(&c, feedsOf(argv[i+1], c), "ssh -o takes an option built at run time, which may be a ProxyCommand; cannot prove what runs")
					case i+1 < len(argv):
						s.sshOption(name, argv[i+1].text, c)
					}
				case name == "runuser" && ch == 'u':
					operands = 0
				case name == "watch" && ch == 'x':
					execMode = true
				case name == "systemd-run" && ch == 'S':
					s.opaque(&c, nil, "systemd-run -S starts a shell: cannot tell what it runs")
					return true
				case name == "systemd-run" && ch == 'p':
					v := t[k+1:]
					if v == "" && i+1 < len(argv) {
						v = argv[i+1].text
					}
					if unitRunsCommand(v) {
						s.opaque(&c, nil, "systemd-run -p "+v+": the unit runs a command of its own")
						return true
					}
				case (name == "su" || name == "runuser" || name == "exec") && ch == 'l':
					s.login(name + " " + t)
				case name == "exec" && ch == 'a':
					// exec -a -bash bash: a leading dash in argv[0] makes a login shell
					if v := t[k+1:]; strings.HasPrefix(v, "-") || v == "" && i+1 < len(argv) && strings.HasPrefix(argv[i+1].text, "-") {
						s.login("exec " + t)
					}
				}
				if strings.IndexByte(w.values, ch) >= 0 {
					consumed = k == len(t)-1
					break
				}
				if w.complete {
					if strings.IndexByte(w.flags, ch) < 0 {
						return unknown("-" + string(ch))
					}
					continue
				}
				if k == 1 && !strings.ContainsRune("EHnSbiklPAsvVxfrqdtcamLpe0-", rune(ch)) {
					unknownAt = i
				}
			}
			i++
			if consumed {
				i++
			}
			continue
		}
		if name == "su" && t == "-" {
			s.login("su -")
			i++
			continue
		}
		if name == "env" && t == "-" {
			i++ // env - is env -i
			continue
		}
		if operands > 0 {
			operands--
			i++
			continue
		}
		break
	}
	for (name == "env" || name == "sudo") && i < len(argv) && argv[i].lit && isAssignment(argv[i].text) {
		s.a.Env = append(s.a.Env, strings.SplitN(argv[i].text, "=", 2)[0])
		i++
	}
	if i >= len(argv) {
		return false
	}
	inner := c.with(name)
	if w.joins && !execMode || shellMode {
		s.joined(name, argv[i:], c)
		return true
	}
	s.simple(argv[i:], inner)
	if unknownAt >= 0 && unknownAt == i-1 && i+1 < len(argv) {
		// An option this analysis does not know may take a value: the
		// command may also start one word later.
		s.simple(argv[i+1:], inner)
	}
	return true
}

// resolveLong finds the long option a word names, exactly or by a prefix
// that names one option only (GNU getopt: env --sp=..., timeout --sig=).
func (w wrapSpec) resolveLong(given string) (name string, takesValue, ok bool) {
	if contains(w.long, given) {
		return given, true, true
	}
	if contains(w.longFlags, given) {
		return given, false, true
	}
	found := 0
	for _, l := range w.long {
		if strings.HasPrefix(l, given) && len(given) > 2 {
			name, takesValue, found = l, true, found+1
		}
	}
	for _, l := range w.longFlags {
		if strings.HasPrefix(l, given) && len(given) > 2 {
			name, takesValue, found = l, false, found+1
		}
	}
	return name, takesValue, found == 1
}

// loginWrappers start a login shell with --login (su, sudo, runuser).
var loginWrappers = map[string]bool{"su": true, "sudo": true, "runuser": true}

// login records a shell that reads its start-up files first.
func (s *scanner) login(how string) {
	s.a.Evaluates = append(s.a.Evaluates, how+" starts a login or interactive shell, which first runs the start-up files (.bash_profile, .bashrc, ...) whatever they hold")
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// joined scans words a wrapper joins into one shell string (ssh host cmd,
// watch cmd, sudo -s cmd).
func (s *scanner) joined(name string, args []arg, c ctx) {
	var parts []string
	for _, a := range args {
		if !a.lit {
			s.opaque(&c, feedsOf(a, c), name+" runs a command built at run time ("+a.text+"); cannot prove what runs")
			return
		}
		parts = append(parts, a.text)
	}
	s.nested(strings.Join(parts, " "), c, name)
}

// codeOption scans the shell code of su -c CODE, flock -c CODE and alike.
func (s *scanner) codeOption(name string, argv []arg, i int, attached bool, value string, c ctx) {
	if !attached {
		if i+1 >= len(argv) {
			return
		}
		a := argv[i+1]
		if !a.lit {
			s.opaque(&c, feedsOf(a, c), name+" runs code built at run time ("+a.text+"); cannot prove what runs")
			return
		}
		value = a.text
	}
	s.nested(value, c, name+" -c")
}

// splitString follows env -S "STRING" args: the string is split into
// words. value is the string when it was attached (-Sx, --split-string=x).
func (s *scanner) splitString(name, value string, attached bool, argv []arg, i int, c ctx) {
	rest := i + 1
	if !attached {
		if i+1 >= len(argv) {
			return
		}
		if !argv[i+1].lit {
			s.opaque(&c, feedsOf(argv[i+1], c), "env -S splits a string built at run time; cannot prove what runs")
			return
		}
		value, rest = argv[i+1].text, i+2
	}
	parts := []string{value}
	for _, a := range argv[rest:] {
		if !a.lit {
			parts = append(parts, "\"$UNKNOWN\"")
			continue
		}
		parts = append(parts, quoteWord(a.text))
	}
	s.nested(strings.Join(parts, " "), c, name+" -S")
}

// isAssignment: NAME=VALUE as env and sudo take it before the command.
func isAssignment(t string) bool {
	k, _, ok := strings.Cut(t, "=")
	if !ok || k == "" || strings.HasPrefix(t, "-") {
		return false
	}
	for i, r := range k {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
