package shellscan

import "strings"

// wrapSpec says how a wrapper's own options and operands come before the
// command it runs.
type wrapSpec struct {
	values   string   // short options that take a value (-u USER)
	long     []string // long options that take a value unless written --opt=value
	operands int      // operands before the command (timeout DURATION)
	joins    bool     // the rest of the words are joined into one shell string (ssh, watch)
	codeOpt  string   // a short option whose value is shell code (su -c, flock -c)
}

// wrappers run the command that follows their options.
var wrappers = map[string]wrapSpec{
	"sudo":        {values: "ugpCDhrtTUR", long: []string{"--user", "--group", "--prompt", "--close-from", "--chdir", "--host", "--role", "--type", "--other-user", "--command-timeout", "--chroot"}},
	"doas":        {values: "uC"},
	"pkexec":      {long: []string{"--user"}},
	"env":         {values: "uCS", long: []string{"--unset", "--chdir", "--split-string"}},
	"nice":        {values: "n", long: []string{"--adjustment"}},
	"ionice":      {values: "cnpPu", long: []string{"--class", "--classdata", "--pid", "--pgid", "--uid"}},
	"timeout":     {values: "sk", long: []string{"--signal", "--kill-after"}, operands: 1},
	"stdbuf":      {values: "ioe", long: []string{"--input", "--output", "--error"}},
	"nohup":       {},
	"setsid":      {},
	"time":        {values: "fo", long: []string{"--format", "--output"}},
	"command":     {},
	"builtin":     {},
	"exec":        {values: "a"},
	"chroot":      {long: []string{"--userspec", "--groups"}, operands: 1},
	"flock":       {values: "wEc", long: []string{"--timeout", "--conflict-exit-code", "--command"}, operands: 1, codeOpt: "c"},
	"taskset":     {operands: 1},
	"chrt":        {values: "T", operands: 1},
	"numactl":     {values: "mNCpiP", long: []string{"--membind", "--cpunodebind", "--physcpubind", "--preferred", "--interleave"}},
	"unbuffer":    {},
	"strace":      {values: "oeEpPsSuIabX", long: []string{"--output", "--expr", "--env", "--user"}},
	"ltrace":      {values: "oeEpsun", long: []string{"--output"}},
	"nsenter":     {values: "tSGw", long: []string{"--target"}},
	"unshare":     {values: "S", long: []string{"--setuid", "--setgid"}},
	"runuser":     {values: "ugGcs", long: []string{"--user", "--group", "--command", "--shell"}, codeOpt: "c"},
	"su":          {values: "cgGsw", long: []string{"--command", "--group", "--shell", "--whitelist-environment"}, codeOpt: "c", operands: 1},
	"sg":          {values: "c", operands: 1, codeOpt: "c"},
	"setpriv":     {},
	"systemd-run": {values: "pEuM", long: []string{"--unit", "--property", "--setenv", "--description", "--slice", "--uid", "--gid", "--working-directory", "--machine", "--on-calendar", "--on-active"}},
	"catchsegv":   {},
	"firejail":    {},
	"proxychains": {values: "f"}, "proxychains4": {values: "f"},
	"torsocks":  {values: "uPa"},
	"faketime":  {values: "f", operands: 1},
	"eatmydata": {}, "fakeroot": {}, "xvfb-run": {values: "nsfe"},
	"cgexec":  {values: "g"},
	"prlimit": {values: "p"},
	"sshpass": {values: "pfde"},
	"script":  {values: "cEIOT", long: []string{"--command", "--log-io", "--log-in", "--log-out", "--log-timing"}, codeOpt: "c"},
	"watch":   {values: "nqx", long: []string{"--interval", "--equexit"}, joins: true},
	"ssh":     {values: "BbcDEeFIiJLlmOopQRSWw", joins: true, operands: 1},
	"busybox": {}, "toybox": {},
	"doas-keepenv": {}, "daemonize": {values: "aceEilopPuv"},
	"start-stop-daemon": {},
	"cpulimit":          {values: "lpe", long: []string{"--limit", "--pid", "--exe"}},
	"chronic":           {}, "nocache": {}, "trickle": {values: "udswtl"}, "dbus-run-session": {}, "dbus-launch": {},
	"chpst":     {values: "ugUenlmdofcrpb"},
	"setuidgid": {operands: 1}, "envdir": {operands: 1}, "softlimit": {values: "mdsltafcor"},
	"lckdo": {values: "w", operands: 1}, "with-lock-ex": {operands: 1}, "entr": {}, "runcon": {values: "utrl"},
	"caffeinate": {}, "watchexec": {values: "wef"},
}

// wrapper follows the command a wrapper runs; false when it runs none
// (command -v rm, sudo -l, env alone).
func (s *scanner) wrapper(name string, w wrapSpec, argv []arg, c ctx) bool {
	i := 1
	operands := w.operands
	var unknownAt int = -1
	shellMode := false
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
			key, _, hasValue := strings.Cut(t, "=")
			if key == "--split-string" {
				s.splitString(name, t, hasValue, argv, i, c)
				return true
			}
			if key == "--command" && w.codeOpt != "" {
				s.codeOption(name, argv, i, hasValue, t, c)
				return true
			}
			i++
			if !hasValue && contains(w.long, key) {
				i++
			}
			continue
		}
		if name == "nice" && strings.HasPrefix(t, "-") && isDigits(strings.TrimPrefix(t[1:], "-")) {
			i++ // the historical nice -10 form
			continue
		}
		if strings.HasPrefix(t, "-") && len(t) > 1 {
			if name == "command" && strings.ContainsAny(t, "vV") {
				return false
			}
			if name == "sudo" && strings.ContainsAny(t[1:], "si") {
				shellMode = true
			}
			if name == "env" && strings.HasPrefix(t, "-S") {
				s.splitString(name, t, len(t) > 2, argv, i, c)
				return true
			}
			consumed := false
			for k := 1; k < len(t); k++ {
				if w.codeOpt != "" && t[k] == w.codeOpt[0] {
					s.codeOption(name, argv, i, k+1 < len(t), t[k+1:], c)
					return true
				}
				if strings.IndexByte(w.values, t[k]) >= 0 {
					if k == len(t)-1 {
						consumed = true
					}
					break
				}
				if k == 1 && !strings.ContainsRune("EHnSbiklPAsvVxfrqdtcamLpe0-", rune(t[k])) {
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
			i++
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
	if w.joins || shellMode {
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
	if v, ok := strings.CutPrefix(argv[i].text, "--command="); ok {
		value, attached = v, true
	}
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

// splitString follows env -S "STRING" args: the string is split into words.
func (s *scanner) splitString(name, opt string, attached bool, argv []arg, i int, c ctx) {
	value := ""
	rest := i + 1
	switch {
	case strings.HasPrefix(opt, "--split-string="):
		value = strings.TrimPrefix(opt, "--split-string=")
	case attached:
		value = strings.TrimPrefix(opt, "-S")
	default:
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
