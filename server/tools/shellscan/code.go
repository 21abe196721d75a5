package shellscan

import (
	"regexp"
	"strings"
)

// interpSpec: the short option letters that take inline code, and long
// options that do.
type interpSpec struct {
	short string
	long  []string
}

// interpreters run code in another language: inline code is opaque.
var interpreters = map[string]interpSpec{
	"python": {short: "c"}, "perl": {short: "eE"}, "ruby": {short: "e"}, "node": {short: "ep", long: []string{"--eval", "--print"}},
	"nodejs": {short: "ep", long: []string{"--eval", "--print"}}, "php": {short: "rBRE"}, "lua": {short: "e"},
	"luajit": {short: "e"}, "Rscript": {short: "e"}, "R": {short: "e"}, "julia": {short: "e", long: []string{"--eval"}},
	"tclsh": {}, "wish": {}, "expect": {short: "c"}, "pwsh": {short: "cC", long: []string{"-Command", "-EncodedCommand"}},
	"powershell": {short: "cC"}, "osascript": {short: "e"}, "bun": {short: "e", long: []string{"--eval"}},
	"deno": {long: []string{"eval"}}, "irb": {}, "jshell": {}, "guile": {short: "c"}, "racket": {short: "e"},
	"sbcl": {long: []string{"--eval"}}, "ocaml": {}, "gdb": {long: []string{"-ex", "--eval-command"}}, "groovy": {short: "e"},
	"scala": {short: "e"}, "jrunscript": {short: "e"}, "busybox-awk": {},
}

var versioned = regexp.MustCompile(`^(python|perl|ruby|lua|php|node|pypy)[0-9.]*$`)

// interpreterFamily maps python3.11 to python and pypy3 to python.
func interpreterFamily(name string) string {
	if _, ok := interpreters[name]; ok || !strings.ContainsAny(name, "0123456789.") {
		return name
	}
	if m := versioned.FindStringSubmatch(name); m != nil {
		if m[1] == "pypy" {
			return "python"
		}
		return m[1]
	}
	return name
}

// interpreter: inline code and programs read from input are opaque; a
// script file is a file run.
func (s *scanner) interpreter(name string, sp interpSpec, argv []arg, c ctx) {
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if !a.lit {
			if i == 1 || strings.HasPrefix(argv[i-1].text, "-") {
				s.opaque(&c, feedsOf(a, c), name+" runs a program named at run time ("+a.text+"); cannot prove what runs")
			}
			return
		}
		t := a.text
		for _, l := range sp.long {
			if t == l || strings.HasPrefix(t, l+"=") {
				s.opaque(&c, nil, "inline "+name+" code cannot be checked; put the steps in plain shell commands")
				return
			}
		}
		if strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && len(t) > 1 && strings.ContainsAny(t[1:], sp.short) && sp.short != "" {
			s.opaque(&c, nil, "inline "+name+" code ("+t+") cannot be checked; put the steps in plain shell commands")
			return
		}
		if t == "-m" && interpreterFamily(name) == "python" {
			return // a module of the installed interpreter
		}
		if t == "-" {
			break
		}
		if !strings.HasPrefix(t, "-") {
			s.scriptFile(name, a, c)
			return
		}
	}
	if c.stdin != nil {
		s.opaque(&c, c.stdin.feeds(), name+" runs a program read from "+c.stdin.what+"; cannot prove what runs")
	}
}

// awk programs can run commands (system(), print | "cmd", "cmd" | getline).
func (s *scanner) awk(name string, argv []arg, c ctx) {
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		t := a.text
		if a.lit && (t == "-F" || t == "-v" || t == "--field-separator" || t == "--assign") {
			i++
			continue
		}
		if a.lit && (t == "-f" || strings.HasPrefix(t, "--file")) {
			s.a.RunsFiles = true
			return
		}
		if a.lit && strings.HasPrefix(t, "-") && len(t) > 1 {
			continue
		}
		if !a.lit {
			s.opaque(&c, feedsOf(a, c), name+" program built at run time; cannot prove what runs")
			return
		}
		prog := strings.ReplaceAll(t, "||", "")
		if strings.Contains(prog, "system") || strings.Contains(prog, "|") || strings.Contains(prog, "getline") {
			s.opaque(&c, nil, name+" program runs commands (system, pipes or getline); cannot prove what runs")
		}
		return
	}
}

// sed's e command and the e flag of s/// run the pattern space as a command.
func (s *scanner) sed(argv []arg, c ctx) {
	var scripts []arg
	explicit := false
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a.lit && (a.text == "-e" || a.text == "--expression"):
			if i+1 < len(argv) {
				scripts = append(scripts, argv[i+1])
			}
			explicit = true
			i++
		case a.lit && strings.HasPrefix(a.text, "--expression="):
			scripts = append(scripts, arg{text: strings.TrimPrefix(a.text, "--expression="), lit: true})
			explicit = true
		case a.lit && (a.text == "-f" || strings.HasPrefix(a.text, "--file")):
			s.a.RunsFiles = true
			explicit = true
			i++
		case a.lit && strings.HasPrefix(a.text, "-") && len(a.text) > 1:
		default:
			if !explicit && len(scripts) == 0 {
				scripts = append(scripts, a)
			}
		}
	}
	for _, sc := range scripts {
		if !sc.lit {
			s.opaque(&c, feedsOf(sc, c), "sed script built at run time; cannot prove it runs no command")
			return
		}
		if sedExecutes(sc.text) {
			s.opaque(&c, nil, "sed script uses the e command, which runs shell commands")
			return
		}
	}
}

var sedAddress = regexp.MustCompile(`^\s*([0-9$,~+!\s]|/(\\.|[^/])*/[IM]*)*`)

func sedExecutes(script string) bool {
	for _, piece := range strings.FieldsFunc(script, func(r rune) bool { return r == ';' || r == '\n' || r == '{' || r == '}' }) {
		cmd := strings.TrimSpace(sedAddress.ReplaceAllString(piece, ""))
		if cmd == "" {
			continue
		}
		if cmd[0] == 'e' {
			return true
		}
		if cmd[0] == 's' && len(cmd) > 1 {
			d := string(cmd[1])
			rest := cmd[2:]
			parts := splitUnescaped(rest, d, 3)
			if len(parts) == 3 && strings.ContainsRune(parts[2], 'e') {
				return true
			}
			if len(parts) < 3 {
				return true // cannot tell where the flags are
			}
		}
	}
	return false
}

func splitUnescaped(s, d string, n int) []string {
	var out []string
	start := 0
	for i := 0; i < len(s) && len(out) < n-1; i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if strings.HasPrefix(s[i:], d) {
			out = append(out, s[start:i])
			start = i + len(d)
		}
	}
	return append(out, s[start:])
}

// execOptions follow options of ordinary programs that run a command.
func (s *scanner) execOptions(name string, argv []arg, c ctx) {
	var opts map[string]bool
	switch name {
	case "tar":
		opts = map[string]bool{"--to-command": true, "--use-compress-program": true, "-I": true, "--checkpoint-action": true,
			"--info-script": true, "--new-volume-script": true, "-F": true, "--rsh-command": true, "--rmt-command": true}
	case "rsync":
		opts = map[string]bool{"-e": true, "--rsh": true, "--rsync-path": true}
	case "ssh", "scp", "sftp":
		opts = map[string]bool{"-o": true, "-S": true}
	case "zip":
		opts = map[string]bool{"-TT": true, "--unzip-command": true}
	case "git":
		s.gitConfig(argv, c)
		return
	case "vim", "vi", "nvim", "view", "ex", "less", "more", "man":
		for _, a := range argv[1:] {
			if a.text == "-c" || a.text == "--cmd" || strings.HasPrefix(a.text, "+") || a.text == "-S" {
				s.opaque(&c, nil, name+" runs editor commands, which can run shell commands")
				return
			}
		}
		return
	case "kubectl", "oc":
		s.afterDashes(name+" exec", argv, c, "exec")
		return
	case "docker", "podman", "nerdctl", "crictl":
		s.containerExec(name, argv, c)
		return
	default:
		return
	}
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		key, value, hasValue := strings.Cut(a.text, "=")
		if !a.lit && opts[key] {
			s.opaque(&c, feedsOf(a, c), name+" "+key+" runs a command built at run time; cannot prove what runs")
			return
		}
		if !a.lit || !opts[key] {
			if a.lit && name == "rsync" && strings.HasPrefix(a.text, "-") && !strings.HasPrefix(a.text, "--") && strings.HasSuffix(a.text, "e") && len(a.text) > 2 {
				key = "-e" // -avze CMD
			} else {
				continue
			}
		}
		if !hasValue {
			if i+1 >= len(argv) {
				return
			}
			i++
			if !argv[i].lit {
				s.opaque(&c, feedsOf(argv[i], c), name+" "+key+" runs a command built at run time; cannot prove what runs")
				return
			}
			value = argv[i].text
		}
		if key == "-o" {
			s.sshOption(name, value, c)
			continue
		}
		if key == "--checkpoint-action" {
			if v, ok := strings.CutPrefix(value, "exec="); ok {
				s.nested(v, c, "tar --checkpoint-action")
			}
			continue
		}
		s.nested(value, c, name+" "+key)
	}
}

// sshOption follows ssh -o KEY=VALUE (or "KEY VALUE") when the option
// names a command that ssh runs locally or remotely.
func (s *scanner) sshOption(name, value string, c ctx) {
	value = strings.TrimLeft(value, " \t")
	end := strings.IndexAny(value, "= \t")
	if end < 0 {
		return
	}
	k, v := value[:end], strings.TrimLeft(value[end:], " \t")
	v = strings.TrimPrefix(v, "=")
	switch strings.ToLower(k) {
	case "proxycommand", "localcommand", "remotecommand", "knownhostscommand":
		s.nested(v, c, name+" -o "+k)
	}
}

// gitConfig: git -c core.sshCommand=..., alias.x=!cmd and alike run commands.
func (s *scanner) gitConfig(argv []arg, c ctx) {
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if a.text == "-c" && i+1 < len(argv) {
			v := argv[i+1]
			k := strings.ToLower(v.text)
			if !v.lit || strings.HasPrefix(k, "core.") || strings.HasPrefix(k, "alias.") || strings.Contains(k, "command") ||
				strings.Contains(k, "program") || strings.Contains(k, "hook") || strings.Contains(k, "editor") || strings.Contains(k, "pager") {
				s.opaque(&c, nil, "git -c "+v.text+" can make git run commands; cannot prove what runs")
				return
			}
			i++
			continue
		}
		if a.text == "--upload-pack" || a.text == "--receive-pack" || a.text == "--exec" || strings.HasPrefix(a.text, "--upload-pack=") ||
			strings.HasPrefix(a.text, "--exec=") || strings.HasPrefix(a.text, "--receive-pack=") {
			s.opaque(&c, nil, "git "+a.text+" runs a command; cannot prove what runs")
			return
		}
	}
}

// afterDashes follows kubectl exec POD -- CMD.
func (s *scanner) afterDashes(via string, argv []arg, c ctx, sub string) {
	seenSub := false
	for i := 1; i < len(argv); i++ {
		if argv[i].text == sub {
			seenSub = true
		}
		if seenSub && argv[i].text == "--" && i+1 < len(argv) {
			s.simple(argv[i+1:], c.with(via))
			return
		}
	}
}

// containerExec follows docker exec [opts] CONTAINER CMD.
func (s *scanner) containerExec(name string, argv []arg, c ctx) {
	if len(argv) < 3 || argv[1].text != "exec" {
		return
	}
	values := map[string]bool{"-e": true, "--env": true, "-u": true, "--user": true, "-w": true, "--workdir": true,
		"--env-file": true, "--detach-keys": true}
	i := 2
	for i < len(argv) && strings.HasPrefix(argv[i].text, "-") {
		if values[argv[i].text] {
			i++
		}
		i++
	}
	if i+1 < len(argv) {
		s.simple(argv[i+1:], c.with(name+" exec"))
	}
}
