package shellscan

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

type scanner struct {
	a      *Analysis
	parser *syntax.Parser
	rt     runtimeCode
}

// ctx is where a command sits: the source its nodes point into, the
// wrappers around it, and what its standard input is.
type ctx struct {
	src   string
	via   []string
	depth int
	stdin *input
}

// input is a command's standard input when it matters: the text of a
// literal here-document or here-string, or the commands feeding it.
type input struct {
	text    string
	literal bool
	from    syntax.Node // what produces it; its commands are the feeds
	extra   []string
	what    string // "a pipe", "a file", "a here-document"
}

// feeds names the commands that produce the input; computed only when a
// program reads its code from it.
func (in *input) feeds() []string { return append(namesIn(in.from), in.extra...) }

func (c ctx) with(via string) ctx {
	n := c
	n.via = append(append([]string(nil), c.via...), via)
	return n
}

func (s *scanner) opaque(c *ctx, feeds []string, reason string) {
	o := Opaque{Reason: reason, Feeds: uniqSorted(feeds)}
	if c != nil {
		o.Via = c.via
	}
	s.a.Opaque = append(s.a.Opaque, o)
}

// script parses src and scans it; via names how it was reached.
func (s *scanner) script(src string, via []string, depth int, stdin *input) {
	c := ctx{src: src, via: via, depth: depth, stdin: stdin}
	if depth > MaxDepth {
		s.opaque(&c, nil, "commands nested deeper than the analysis follows")
		return
	}
	f, err := s.parser.Parse(strings.NewReader(src), "")
	if err != nil {
		s.opaque(&c, nil, "the shell cannot parse it ("+err.Error()+")")
		return
	}
	if strings.Contains(src, "@") || strings.Contains(src, "((") || strings.Contains(src, "let") || strings.Contains(src, "[") ||
		strings.Contains(src, "read") || strings.Contains(src, "mapfile") || strings.Contains(src, "getopts") {
		s.scanNode(f, &c) // only lines that can hold such constructs pay for the walk
	}
	for _, st := range f.Stmts {
		s.stmt(st, c)
	}
}

// nested scans a string that a command hands to a shell; the shell
// inherits the command's standard input.
func (s *scanner) nested(src string, c ctx, via string) {
	s.script(src, c.with(via).via, c.depth+1, c.stdin)
}

func (s *scanner) stmts(sts []*syntax.Stmt, c ctx) {
	for _, st := range sts {
		s.stmt(st, c)
	}
}

func (s *scanner) stmt(st *syntax.Stmt, c ctx) {
	if st == nil {
		return
	}
	for _, r := range st.Redirs {
		s.redirect(r, &c)
	}
	s.command(st.Cmd, c)
}

// redirect records files written and sets the standard input.
func (s *scanner) redirect(r *syntax.Redirect, c *ctx) {
	if r.Word != nil {
		s.subst(r.Word, *c)
	}
	if r.Hdoc != nil {
		s.subst(r.Hdoc, *c)
	}
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll, syntax.RdrInOut, syntax.DplOut:
		target, ok := literalString(r.Word, c.src)
		switch {
		case !ok:
			s.a.Writes = append(s.a.Writes, "?")
		case r.Op == syntax.DplOut && (target == "-" || isDigits(target)):
		case target == "/dev/null" || target == "/dev/stdout" || target == "/dev/stderr":
		default:
			s.a.Writes = append(s.a.Writes, target)
		}
	case syntax.Hdoc, syntax.DashHdoc:
		text, ok := literalDoc(r.Hdoc)
		c.stdin = &input{text: text, literal: ok, from: r.Hdoc, what: "a here-document"}
	case syntax.WordHdoc:
		text, ok := literalString(r.Word, c.src)
		c.stdin = &input{text: text, literal: ok, from: r.Word, what: "a here-string"}
	case syntax.RdrIn:
		f, _ := literalString(r.Word, c.src)
		c.stdin = &input{what: "a file", from: r.Word, extra: []string{"file:" + f}}
	}
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

func (s *scanner) command(cmd syntax.Command, c ctx) {
	switch x := cmd.(type) {
	case nil:
	case *syntax.CallExpr:
		s.call(x, c)
	case *syntax.BinaryCmd:
		if x.Op == syntax.Pipe || x.Op == syntax.PipeAll {
			left := c
			left.stdin = c.stdin
			s.stmt(x.X, left)
			right := c
			right.stdin = &input{what: "a pipe", from: x.X}
			s.stmt(x.Y, right)
			return
		}
		s.stmt(x.X, c)
		s.stmt(x.Y, c)
	case *syntax.Subshell:
		s.stmts(x.Stmts, c)
	case *syntax.Block:
		s.stmts(x.Stmts, c)
	case *syntax.IfClause:
		for cl := x; cl != nil; cl = cl.Else {
			s.stmts(cl.Cond, c)
			s.stmts(cl.Then, c)
		}
	case *syntax.WhileClause:
		s.stmts(x.Cond, c)
		s.stmts(x.Do, c)
	case *syntax.ForClause:
		if wi, ok := x.Loop.(*syntax.WordIter); ok {
			for _, w := range wi.Items {
				if !plainValue(w) {
					s.rt.dynamicSet = true
				}
			}
		}
		s.subst(x.Loop, c)
		s.stmts(x.Do, c)
	case *syntax.CaseClause:
		s.subst(x.Word, c)
		for _, it := range x.Items {
			for _, p := range it.Patterns {
				s.subst(p, c)
			}
			s.stmts(it.Stmts, c)
		}
	case *syntax.FuncDecl:
		name := ""
		if x.Name != nil {
			name = x.Name.Value
		}
		s.a.Functions = append(s.a.Functions, name)
		s.stmt(x.Body, c.with("function "+name))
	case *syntax.TimeClause:
		s.stmt(x.Stmt, c)
	case *syntax.CoprocClause:
		s.stmt(x.Stmt, c.with("coproc"))
	case *syntax.TestDecl:
		s.stmt(x.Body, c)
	case *syntax.DeclClause:
		for _, as := range x.Args {
			if as.Name != nil {
				s.a.Env = append(s.a.Env, as.Name.Value)
			} else if as.Naked && as.Value != nil {
				if v, ok := literalString(as.Value, c.src); ok {
					n := strings.SplitN(v, "=", 2)[0]
					s.a.Env = append(s.a.Env, n)
					s.evaluatedName(x.Variant.Value, arg{text: n, pattern: n, lit: true}, c)
				} else {
					s.a.Env = append(s.a.Env, "?")
				}
			}
		}
		s.subst(x, c)
	case *syntax.TestClause:
		s.testClauseNames(x, c)
		s.subst(x, c)
	case *syntax.ArithmCmd, *syntax.LetClause:
		s.subst(x, c)
	default:
		s.opaque(&c, nil, "a shell construct the analysis does not know")
	}
}

// subst scans the command substitutions and process substitutions inside
// a node (a word, an expression), which run before the command they sit in.
func (s *scanner) subst(n syntax.Node, c ctx) {
	if n == nil || plainWord(n) {
		return
	}
	syntax.Walk(n, func(node syntax.Node) bool {
		switch x := node.(type) {
		case *syntax.CmdSubst:
			inner := c.with("$(...)")
			inner.stdin = nil
			s.stmts(x.Stmts, inner)
			return false
		case *syntax.ProcSubst:
			inner := c.with("process substitution")
			inner.stdin = nil
			s.stmts(x.Stmts, inner)
			return false
		}
		return true
	})
}

// namesIn are the base names of every literal word of every command in a
// node: what may produce the data that flows out of it.
func namesIn(n syntax.Node) []string {
	if n == nil {
		return nil
	}
	var out []string
	syntax.Walk(n, func(node syntax.Node) bool {
		if call, ok := node.(*syntax.CallExpr); ok {
			for _, w := range call.Args {
				if l := w.Lit(); l != "" {
					out = append(out, path.Base(l))
				} else if v, ok := literalString(w, ""); ok {
					out = append(out, path.Base(v))
				}
			}
		}
		return true
	})
	return out
}

// call scans one simple command.
func (s *scanner) call(x *syntax.CallExpr, c ctx) {
	for _, as := range x.Assigns {
		if as.Name != nil {
			s.a.Env = append(s.a.Env, as.Name.Value)
		}
		if as.Value != nil && as.Index == nil && as.Array == nil {
			s.subst(as.Value, c)
		} else {
			s.subst(as, c)
		}
	}
	argv := make([]arg, 0, len(x.Args))
	for _, w := range x.Args {
		s.subst(w, c)
		argv = append(argv, expandWord(w, c.src)...)
	}
	if len(argv) == 0 {
		return
	}
	if len(argv) > 0 && argv[0].lit && setsFromInput[argv[0].text] {
		s.rt.dynamicSet = true
	}
	if !argv[0].lit {
		var feeds []string
		if len(x.Args) > 0 {
			feeds = namesIn(x.Args[0])
		}
		s.opaque(&c, feeds, "the command name comes from a variable or a substitution ("+argv[0].text+"); cannot prove what runs")
		return
	}
	s.simple(argv, c)
}

// plainWord: a word of literals and single quotes substitutes nothing.
func plainWord(n syntax.Node) bool {
	w, ok := n.(*syntax.Word)
	if !ok {
		return false
	}
	for _, p := range w.Parts {
		switch p.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		default:
			return false
		}
	}
	return true
}
