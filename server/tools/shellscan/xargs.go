package shellscan

import "strings"

// xargs runs a command (echo by default) with arguments read from its
// input: those arguments are unknown, and with -I the replacement string
// marks where they go (a command name or a shell string built from input
// is opaque).
func (s *scanner) xargs(argv []arg, c ctx) {
	replace := ""
	i := 1
	for i < len(argv) {
		a := argv[i]
		if !a.lit {
			break
		}
		t := a.text
		if t == "--" {
			i++
			break
		}
		if strings.HasPrefix(t, "--") {
			given, v, has := strings.Cut(t, "=")
			key, takesValue, ok := xargsSpec.resolveLong(given)
			if !ok {
				s.opaque(&c, nil, "unknown option "+given+" of xargs: cannot tell which command it runs")
				return
			}
			if key == "--replace" {
				replace = "{}"
				if has {
					replace = v
				}
			}
			i++
			if !has && takesValue {
				i++
			}
			continue
		}
		if strings.HasPrefix(t, "-") && len(t) > 1 {
			i++
		letters:
			for k := 1; k < len(t); k++ {
				ch := t[k]
				rest := t[k+1:]
				switch {
				case ch == 'I':
					replace = rest
					if rest == "" && i < len(argv) {
						replace = argv[i].text
						i++
					}
					break letters
				case ch == 'i':
					replace = "{}"
					if rest != "" {
						replace = rest
					}
					break letters
				case ch == 'e' || ch == 'l':
					break letters // optional value, attached only
				case strings.IndexByte(xargsSpec.values, ch) >= 0:
					if rest == "" {
						i++
					}
					break letters
				case strings.IndexByte(xargsSpec.flags, ch) < 0:
					s.opaque(&c, nil, "unknown option -"+string(ch)+" of xargs: cannot tell which command it runs")
					return
				}
			}
			continue
		}
		break
	}
	cmd := []arg{{text: "echo", pattern: "echo", lit: true}}
	if i < len(argv) {
		cmd = append([]arg(nil), argv[i:]...)
	}
	input := arg{text: "<input>"}
	if replace == "" {
		cmd = append(cmd, input)
	} else {
		for k := range cmd {
			if strings.Contains(cmd[k].text, replace) {
				cmd[k] = arg{text: cmd[k].text}
			}
		}
	}
	in := c.with("xargs")
	in.stdin = nil
	s.simple(cmd, in)
}

// xargsSpec is GNU xargs's options (findutils 4.9): -e, -i and -l take
// their value attached only.
var xargsSpec = wrapSpec{values: "adEILnPs", flags: "0optrx", complete: true,
	long: []string{"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"},
	longFlags: []string{"--null", "--open-tty", "--interactive", "--no-run-if-empty", "--show-limits", "--verbose", "--exit",
		"--replace", "--eof", "--max-lines", "--help", "--version"}}

// find: -exec/-execdir/-ok/-okdir run a command per file ({} stands for
// the file, an unknown value); -delete stays in find's own arguments for
// the effect catalog. Reports whether it runs commands.
func (s *scanner) find(argv []arg, c ctx) bool {
	runs := false
	for i := 1; i < len(argv); i++ {
		switch argv[i].text {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		via := "find " + argv[i].text
		j := i + 1
		var cmd []arg
		for ; j < len(argv); j++ {
			t := argv[j].text
			if argv[j].lit && (t == ";" || t == "+") {
				break
			}
			a := argv[j]
			if strings.Contains(t, "{}") {
				a = arg{text: t}
			}
			cmd = append(cmd, a)
		}
		if len(cmd) > 0 {
			in := c.with(via)
			in.stdin = nil
			s.simple(cmd, in)
			runs = true
		}
		i = j
	}
	return runs
}
