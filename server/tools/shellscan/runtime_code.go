package shellscan

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Constructs through which a line can run code that no command word shows:
// checked over the whole parsed line.

// runtimeCode records what the walk saw that can run hidden code.
type runtimeCode struct {
	arithVars  bool // arithmetic reads a variable (bash evaluates a[$(cmd)] in its value)
	dynamicSet bool // a variable gets a value that is not a plain literal
}

// scanNode looks for prompt expansion (${x@P}), arithmetic on variables and
// variables set from run-time data.
func (s *scanner) scanNode(n syntax.Node, c *ctx) {
	syntax.Walk(n, func(node syntax.Node) bool {
		switch x := node.(type) {
		case *syntax.ParamExp:
			if x.Exp != nil && x.Exp.Op == syntax.OtherParamOps && x.Exp.Word != nil && strings.ContainsAny(x.Exp.Word.Lit(), "PE") {
				s.opaque(c, nil, "${"+nodeSource(x, c.src)+"} expands a value as a prompt or escapes, which can run commands")
			}
			if x.Index != nil {
				s.rt.arithVars = true
			}
		case *syntax.ArithmExp, *syntax.ArithmCmd, *syntax.LetClause:
			if hasVariable(node) {
				s.rt.arithVars = true
			}
		case *syntax.BinaryTest:
			switch x.Op {
			case syntax.TsEql, syntax.TsNeq, syntax.TsLss, syntax.TsLeq, syntax.TsGtr, syntax.TsGeq:
				s.rt.arithVars = true
			}
		case *syntax.Assign:
			if x.Value != nil && !plainValue(x.Value) || x.Array != nil {
				s.rt.dynamicSet = true
			}
		}
		return true
	})
}

// hasVariable: an arithmetic node names a variable (bare or $x).
func hasVariable(n syntax.Node) bool {
	found := false
	syntax.Walk(n, func(node syntax.Node) bool {
		switch x := node.(type) {
		case *syntax.ParamExp:
			found = true
		case *syntax.Lit:
			if x.Value != "" && (x.Value[0] == '_' || x.Value[0] >= 'A' && x.Value[0] <= 'Z' || x.Value[0] >= 'a' && x.Value[0] <= 'z') {
				found = true
			}
		}
		return !found
	})
	return found
}

// plainValue: a literal value that cannot carry code into arithmetic.
func plainValue(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(x.Value, "$`[") {
				return false
			}
		case *syntax.SglQuoted:
			if strings.ContainsAny(x.Value, "$`[") {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// setsFromInput: builtins that set variables from data (read x, mapfile).
var setsFromInput = map[string]bool{"read": true, "mapfile": true, "readarray": true, "getopts": true, "printf": false}

// systemProgram: a literal path into a system directory (/bin/rm).
func systemProgram(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	_, dir := baseName(p)
	return systemDirs[path_clean(dir)]
}

// copiers put a file under another name.
var copiers = map[string]bool{"cp": true, "mv": true, "ln": true, "install": true, "rsync": true, "link": true}

// dynamicLoader: ld-linux-x86-64.so.2 /bin/rm runs /bin/rm.
func dynamicLoader(name string) bool {
	return strings.HasPrefix(name, "ld-linux") || strings.HasPrefix(name, "ld-musl") || name == "ld.so"
}

// codeVars make a program or shell run code when set.
func codeVar(name string) bool {
	switch name {
	case "BASH_ENV", "ENV", "LD_PRELOAD", "LD_AUDIT", "PROMPT_COMMAND", "PS4", "PERL5OPT", "NODE_OPTIONS", "PYTHONSTARTUP",
		"GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_PAGER", "PAGER", "EDITOR", "VISUAL", "SHELLOPTS":
		return true
	}
	return strings.HasPrefix(name, "BASH_FUNC_")
}
