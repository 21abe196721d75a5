package shellscan

import "strings"

// xargs runs a command (echo by default) with arguments read from its
// input: those arguments are unknown, and with -I the replacement string
// marks where they go (a command name or a shell string built from input
// is opaque).
func (s *scanner) xargs(argv []arg, c ctx) {
	values := "adEILnPs"
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
			key, v, has := strings.Cut(t, "=")
			if key == "--replace" {
				replace = "{}"
				if has {
					replace = v
				}
			}
			i++
			if !has && contains([]string{"--arg-file", "--delimiter", "--max-lines", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"}, key) {
				i++
			}
			continue
		}
		if strings.HasPrefix(t, "-") && len(t) > 1 {
			i++
			switch t[1] {
			case 'I':
				if len(t) > 2 {
					replace = t[2:]
				} else if i < len(argv) {
					replace = argv[i].text
					i++
				}
			case 'i':
				replace = "{}"
				if len(t) > 2 {
					replace = t[2:]
				}
			default:
				if strings.IndexByte(values, t[1]) >= 0 && len(t) == 2 {
					i++
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
