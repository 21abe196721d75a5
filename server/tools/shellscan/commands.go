package shellscan

import (
	"regexp"
	"strings"
)

// simple records one command and follows what it runs.
func (s *scanner) simple(argv []arg, c ctx) {
	if len(argv) == 0 {
		return
	}
	if len(s.a.Commands) >= MaxCommands {
		if len(s.a.Commands) == MaxCommands {
			s.opaque(&c, nil, "too many commands to analyse")
			s.a.Commands = append(s.a.Commands, Command{Name: "…"})
		}
		return
	}
	head := argv[0]
	if !head.lit {
		s.opaque(&c, nil, "the command name comes from a variable, a substitution or input ("+head.text+"); cannot prove what runs")
		return
	}
	name, dir := baseName(head.pattern)
	cmd := Command{Name: unescapePattern(name), Glob: hasGlob(name), Via: c.via, Args: make([]string, 0, len(argv)-1),
		literal: make([]bool, 0, len(argv)-1)}
	if cmd.Glob {
		cmd.Name = name
	}
	if dir != "" {
		cmd.Path = head.text
		if !systemDirs[path_clean(dir)] {
			cmd.Script = true
			s.a.RunsFiles = true
		}
	}
	for _, x := range argv[1:] {
		cmd.Args = append(cmd.Args, x.text)
		cmd.literal = append(cmd.literal, x.lit)
	}
	idx := len(s.a.Commands)
	s.a.Commands = append(s.a.Commands, cmd)
	if cmd.Glob {
		if re, err := globRegexp(name); err != nil || reachesRunner(re) {
			s.opaque(&c, nil, "a glob in command position ("+head.text+") could run a shell, an interpreter or a wrapper")
		}
		return
	}
	if s.follow(cmd.Name, argv, c) {
		s.a.Commands[idx].Wrapper = true
	}
}

func path_clean(d string) string { return strings.TrimRight(d, "/") }

// reachesRunner: a glob that can name a program which runs other programs.
func reachesRunner(re *regexp.Regexp) bool {
	for n := range runners {
		if re.MatchString(n) {
			return true
		}
	}
	return false
}

// runners are the names whose arguments are followed as further commands.
var runners = map[string]bool{}

func init() {
	for n := range shells {
		runners[n] = true
	}
	for n := range interpreters {
		runners[n] = true
	}
	for n := range wrappers {
		runners[n] = true
	}
	for _, n := range []string{"eval", "source", ".", "xargs", "find", "env", "sudo", "su", "ssh", "watch", "trap", "alias",
		"awk", "gawk", "mawk", "nawk", "sed", "tar", "rsync", "git", "vim", "vi", "nvim", "at", "batch", "tmux", "screen",
		"parallel", "kubectl", "docker", "podman", "flock", "script", "busybox", "toybox", "command", "exec", "builtin"} {
		runners[n] = true
	}
}

// follow handles a command that runs other commands or code; it reports
// whether the command is a wrapper of another.
func (s *scanner) follow(name string, argv []arg, c ctx) bool {
	if shells[name] {
		s.shell(name, argv, c)
		return true
	}
	if flags, ok := interpreters[interpreterFamily(name)]; ok {
		s.interpreter(name, flags, argv, c)
		return false
	}
	if w, ok := wrappers[name]; ok {
		return s.wrapper(name, w, argv, c)
	}
	if dynamicLoader(name) {
		return s.wrapper(name, wrapSpec{long: []string{"--library-path", "--preload", "--audit", "--argv0", "--inhibit-rpath"}}, argv, c)
	}
	if copiers[name] {
		for _, a := range argv[1:] {
			if a.lit && systemProgram(a.text) {
				s.opaque(&c, nil, name+" copies the program "+a.text+", which may then run under another name")
				break
			}
		}
	}
	switch name {
	case "eval":
		s.codeArgs("eval", argv[1:], c)
		return true
	case "source", ".":
		s.source(name, argv, c)
		return true
	case "alias":
		for _, x := range argv[1:] {
			if !x.lit {
				s.opaque(&c, nil, "alias defined from a variable or substitution")
				continue
			}
			if i := strings.IndexByte(x.text, '='); i > 0 {
				s.nested(x.text[i+1:], c, "alias "+x.text[:i])
			}
		}
		return true
	case "trap":
		if len(argv) > 2 && !strings.HasPrefix(argv[1].text, "-") {
			s.codeArgs("trap", argv[1:2], c)
		}
		return true
	case "xargs":
		s.xargs(argv, c)
		return true
	case "find":
		return s.find(argv, c)
	case "awk", "gawk", "mawk", "nawk":
		s.awk(name, argv, c)
	case "sed", "gsed":
		s.sed(argv, c)
	case "test", "[", "printf", "read", "unset", "getopts", "declare", "typeset", "local", "export", "readonly", "wait":
		s.evaluatedNames(name, argv, c)
	case "hash":
		for _, a := range argv[1:] {
			if strings.HasPrefix(a.text, "-") && strings.Contains(a.text, "p") {
				s.opaque(&c, nil, "hash -p makes a name run another program")
			}
		}
	case "enable":
		for _, a := range argv[1:] {
			if strings.HasPrefix(a.text, "-") && strings.Contains(a.text, "f") {
				s.opaque(&c, nil, "enable -f loads code from a shared object")
			}
		}
	case "mapfile", "readarray":
		s.evaluatedNames(name, argv, c)
		for _, a := range argv[1:] {
			if strings.HasPrefix(a.text, "-") && strings.Contains(a.text, "C") {
				s.opaque(&c, nil, name+" -C runs a callback the analysis cannot check")
			}
		}
	case "at", "batch":
		s.stdinProgram(name, c)
		return true
	case "run-parts":
		s.a.RunsFiles = true
	case "tmux", "screen", "parallel", "sem", "bwrap", "systemd-nspawn", "capsh", "machinectl", "firejail", "nsjail":
		if len(argv) > 1 && !onlyListing(argv[1:]) {
			s.opaque(&c, nil, name+" runs commands this analysis cannot follow; run them directly instead")
		}
	default:
		s.execOptions(name, argv, c)
	}
	return false
}

func onlyListing(args []arg) bool {
	for _, a := range args {
		switch a.text {
		case "ls", "list", "status", "list-sessions", "-ls", "-list", "--version", "-V", "info":
		default:
			return false
		}
	}
	return true
}

// codeArgs scans arguments that a builtin joins and runs as shell code.
func (s *scanner) codeArgs(via string, args []arg, c ctx) {
	var parts []string
	for _, a := range args {
		if !a.lit {
			s.opaque(&c, feedsOf(a, c), via+" runs code built at run time ("+a.text+"); cannot prove what runs")
			return
		}
		parts = append(parts, a.text)
	}
	if len(parts) > 0 {
		s.nested(strings.Join(parts, " "), c, via)
	}
}

// feedsOf are the commands inside a non-literal argument's substitutions.
func feedsOf(a arg, c ctx) []string {
	if a.lit {
		return nil
	}
	return namesFromSource(a.text)
}

// namesFromSource parses a word's source text to name the commands in it.
func namesFromSource(src string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(src, func(r rune) bool {
		return strings.ContainsRune(" \t\n$(){}`|;&<>\"'=", r)
	}) {
		n, _ := baseName(f)
		out = append(out, n)
	}
	return out
}

// shells are the programs that run shell code (followed recursively).
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true,
	"posh": true, "yash": true, "rbash": true, "ksh93": true, "lksh": true, "busybox-sh": true, "fish": true, "tcsh": true, "csh": true}

// shell follows sh -c STRING, sh FILE and sh reading its program from
// standard input.
func (s *scanner) shell(name string, argv []arg, c ctx) {
	var code *arg
	hasC, fromStdin := false, false
	i := 1
	for ; i < len(argv); i++ {
		a := argv[i]
		if !a.lit {
			break
		}
		t := a.text
		if t == "--" || t == "-" {
			i++
			break
		}
		if t == "-o" || t == "+o" || t == "-O" || t == "+O" {
			i++
			continue
		}
		if strings.HasPrefix(t, "--") {
			key, _, _ := strings.Cut(t, "=")
			switch {
			case len(key) > 2 && strings.HasPrefix("--login", key):
				s.login(name + " " + t)
			case len(key) > 2 && (strings.HasPrefix("--rcfile", key) || strings.HasPrefix("--init-file", key)):
				s.login(name + " " + t)
				if !strings.Contains(t, "=") {
					i++
				}
			}
			continue
		}
		if strings.HasPrefix(t, "-") && strings.ContainsAny(t[1:], "il") {
			s.login(name + " " + t)
		}
		if (strings.HasPrefix(t, "-") || strings.HasPrefix(t, "+")) && len(t) > 1 {
			if strings.ContainsRune(t[1:], 'c') {
				hasC = true
			}
			if strings.ContainsRune(t[1:], 's') {
				fromStdin = true
			}
			continue
		}
		break
	}
	if hasC {
		if i >= len(argv) {
			s.opaque(&c, nil, name+" -c without a command string")
			return
		}
		code = &argv[i]
		if !code.lit || code.glob {
			s.opaque(&c, feedsOf(*code, c), name+" -c runs a string built at run time ("+code.text+"); cannot prove what runs")
			return
		}
		if name == "fish" || name == "csh" || name == "tcsh" {
			s.opaque(&c, nil, name+" code is not shell code this analysis parses")
			return
		}
		s.nested(code.text, c, name+" -c")
		return
	}
	if i < len(argv) && !fromStdin {
		s.scriptFile(name, argv[i], c)
		return
	}
	s.stdinProgram(name, c)
}

// scriptFile: a shell or interpreter runs a file.
func (s *scanner) scriptFile(name string, f arg, c ctx) {
	if !f.lit {
		s.opaque(&c, feedsOf(f, c), name+" runs a program from "+f.text+"; cannot prove what runs")
		return
	}
	switch f.text {
	case "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0":
		s.stdinProgram(name, c)
		return
	}
	if strings.HasPrefix(f.text, "/dev/fd/") || strings.HasPrefix(f.text, "/proc/") {
		s.opaque(&c, nil, name+" runs a program from "+f.text+"; cannot prove what runs")
		return
	}
	s.a.RunsFiles = true
}

// stdinProgram: a program reads the code it runs from standard input.
func (s *scanner) stdinProgram(name string, c ctx) {
	in := c.stdin
	if in == nil {
		return
	}
	if in.literal && (shells[name] || name == "at" || name == "batch") {
		inner := c
		inner.stdin = nil
		s.nested(in.text, inner, name+" reading "+in.what)
		return
	}
	s.opaque(&c, in.feeds(), name+" runs a program read from "+in.what+"; cannot prove what runs")
}

// source runs a file in the current shell.
func (s *scanner) source(name string, argv []arg, c ctx) {
	if len(argv) < 2 {
		return
	}
	s.scriptFile(name, argv[1], c)
}
