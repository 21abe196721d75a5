package shellscan

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Builtins that take a variable's name evaluate a subscript in it as
// arithmetic, and bash expands $(...) in a subscript when it does:
// test -v 'a[$(touch x)]' runs touch. Such a name counts as code run: it is
// never read-only, its commands are scanned like any others, and a name
// known only at run time is opaque.

// nameArgs are the arguments of a builtin that are variable names.
func nameArgs(name string, argv []arg) []arg {
	var out []arg
	switch name {
	case "test", "[":
		for i := 1; i+1 < len(argv); i++ {
			if argv[i].lit && (argv[i].text == "-v" || argv[i].text == "-R") {
				out = append(out, argv[i+1])
			}
		}
	case "printf":
		for i := 1; i < len(argv) && argv[i].lit && strings.HasPrefix(argv[i].text, "-"); i++ {
			t := argv[i].text
			if t == "--" {
				break
			}
			if t == "-v" && i+1 < len(argv) {
				out = append(out, argv[i+1])
				i++
			} else if strings.HasPrefix(t, "-v") {
				out = append(out, arg{text: t[2:], pattern: t[2:], lit: true})
			}
		}
	case "read", "unset", "declare", "typeset", "local", "export", "readonly", "mapfile", "readarray", "getopts", "wait":
		valued := map[string]string{"read": "adinNptu", "mapfile": "dnOstuC", "readarray": "dnOstuC", "wait": "p"}[name]
		operands := false
		for i := 1; i < len(argv); i++ {
			a := argv[i]
			if !operands && a.lit && len(a.text) > 1 && (a.text[0] == '-' || a.text[0] == '+') {
				if a.text == "--" {
					operands = true
					continue
				}
				if k := strings.IndexAny(a.text[1:], valued); k >= 0 {
					v := a.text[k+2:]
					if v == "" && i+1 < len(argv) {
						i++
						v = argv[i].text
						if a.text[k+1] == 'a' || a.text[k+1] == 'p' && name == "wait" {
							out = append(out, argv[i])
						}
					}
				}
				continue
			}
			operands = true
			if name == "getopts" && i == 1 {
				continue // the option string
			}
			if a.lit {
				if k := strings.IndexByte(a.text, '='); k > 0 && name != "read" && name != "unset" {
					a = arg{text: a.text[:k], pattern: a.text[:k], lit: true}
				}
			}
			out = append(out, a)
		}
	}
	return out
}

// evaluatedNames checks the variable names a builtin is given.
func (s *scanner) evaluatedNames(name string, argv []arg, c ctx) {
	for _, a := range nameArgs(name, argv) {
		s.evaluatedName(name, a, c)
	}
}

func (s *scanner) evaluatedName(via string, a arg, c ctx) {
	if !a.lit {
		s.opaque(&c, feedsOf(a, c), via+" is given a variable name known only at run time ("+a.text+"); a subscript in it would run as code")
		return
	}
	open := strings.IndexByte(a.text, '[')
	if open < 0 || !strings.HasSuffix(a.text, "]") {
		return
	}
	sub := a.text[open+1 : len(a.text)-1]
	if isDigits(sub) || sub == "@" || sub == "*" {
		return
	}
	s.a.Evaluates = append(s.a.Evaluates, via+" evaluates the subscript of "+quoteWord(a.text)+" as code")
	s.rt.arithVars = true
	s.nested(": "+sub, c, via+" subscript")
}

// testClauseNames: [[ -v NAME ]] and [[ -R NAME ]].
func (s *scanner) testClauseNames(x *syntax.TestClause, c ctx) {
	syntax.Walk(x, func(n syntax.Node) bool {
		if u, ok := n.(*syntax.UnaryTest); ok && (u.Op == syntax.TsVarSet || u.Op == syntax.TsRefVar) {
			if w, ok := u.X.(*syntax.Word); ok {
				for _, a := range expandWord(w, c.src) {
					s.evaluatedName("[[ -v ]]", a, c)
				}
			}
		}
		return true
	})
}
