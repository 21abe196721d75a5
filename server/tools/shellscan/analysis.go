package shellscan

import (
	"path"
	"sort"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Limits: deeper nesting, longer input or more commands make the call opaque.
const (
	MaxDepth    = 8
	MaxSource   = 64 << 10
	MaxCommands = 4096
)

// Command is one simple command that can run.
type Command struct {
	// Name is the program's name: the base name of what was written in
	// command position, quotes removed; a glob pattern when Glob.
	Name string `json:"name"`
	// Path is what was written when it named a directory (/usr/bin/rm).
	Path string `json:"path,omitempty"`
	// Glob: the name is a pattern and can reach every name it matches.
	Glob bool `json:"glob,omitempty"`
	// Args are the arguments, quotes removed; a non-literal one is shown
	// as written ($DIR) and can stand for any value.
	Args []string `json:"args"`
	// Via are the wrappers and shells it was reached through, outermost
	// first ("sudo", "bash -c", "$(...)").
	Via []string `json:"via,omitempty"`
	// Wrapper: the command runs another one (sudo, env, bash -c, xargs...).
	Wrapper bool `json:"wrapper,omitempty"`
	// Script: the name is a file path outside the system directories.
	Script bool `json:"script,omitempty"`

	literal []bool // per arg: its value is known
}

// ArgLiteral reports whether argument i has a known value.
func (c *Command) ArgLiteral(i int) bool { return i < len(c.literal) && c.literal[i] }

// Opaque is a part of the call whose effect cannot be proven.
type Opaque struct {
	Reason string   `json:"reason"`
	Via    []string `json:"via,omitempty"`
	// Feeds are the names of the commands whose output becomes the unknown
	// program (the curl of curl ... | sh).
	Feeds []string `json:"feeds,omitempty"`
}

// Analysis is what a command line runs.
type Analysis struct {
	Commands []Command `json:"commands"`
	Opaque   []Opaque  `json:"opaque,omitempty"`
	// Writes are the files redirections write ("?" when not literal).
	Writes []string `json:"writes,omitempty"`
	// RunsFiles: it runs a script file (./x, sh file, source file).
	RunsFiles bool `json:"runs_files,omitempty"`
	// Functions are the shell functions it defines.
	Functions []string `json:"functions,omitempty"`
	// Evaluates are code the line runs that no command word shows: the
	// start-up files of a login or interactive shell, array subscripts that
	// builtins evaluate (test -v 'a[$(cmd)]'). Such a line is never read-only.
	Evaluates []string `json:"evaluates,omitempty"`
	// Env are the variables it assigns (PATH=... cmd, export X=..., env X=...).
	Env []string `json:"env,omitempty"`
}

// IsOpaque reports whether some part could not be proven.
func (a *Analysis) IsOpaque() bool { return len(a.Opaque) > 0 }

// Analyze parses a command line as a shell would and reports what it runs.
// It never panics and never fails: what it cannot prove is in Opaque.
func Analyze(src string) (a *Analysis) {
	a = &Analysis{Commands: make([]Command, 0, min(max(8, len(src)/20), 1024))}
	defer func() {
		if r := recover(); r != nil {
			a.Opaque = append(a.Opaque, Opaque{Reason: "the command line could not be analysed"})
		}
	}()
	if len(src) > MaxSource {
		a.Opaque = append(a.Opaque, Opaque{Reason: "the command line is too long to analyse"})
		return a
	}
	s := &scanner{a: a, parser: syntax.NewParser(syntax.Variant(syntax.LangBash))}
	s.script(src, nil, 0, nil)
	a.Env = uniqSorted(a.Env)
	if s.rt.arithVars && s.rt.dynamicSet {
		s.opaque(nil, nil, "arithmetic on a variable set at run time can run commands hidden in its value (a[$(...)])")
	}
	for _, v := range a.Env {
		if codeVar(v) {
			s.opaque(nil, nil, "setting "+v+" makes programs run code it names")
			break
		}
	}
	if a.RunsFiles && len(a.Writes) > 0 {
		s.opaque(nil, nil, "it runs a script file and writes files in the same command line, so it may run a file it wrote")
	}
	a.Functions = uniqSorted(a.Functions)
	a.Writes = uniqSorted(a.Writes)
	return a
}

func uniqSorted(xs []string) []string {
	if len(xs) == 0 {
		return nil
	}
	sort.Strings(xs)
	out := xs[:1]
	for _, x := range xs[1:] {
		if x != out[len(out)-1] {
			out = append(out, x)
		}
	}
	return out
}

// systemDirs hold the programs a path in command position names by its
// base name; a path elsewhere is a script (or a copy) and runs a file.
var systemDirs = map[string]bool{"/bin": true, "/sbin": true, "/usr/bin": true, "/usr/sbin": true,
	"/usr/local/bin": true, "/usr/local/sbin": true, "/usr/libexec": true, "/usr/lib/systemd": true}

// Summary says in one line what the call was parsed as, for people and
// for the model: "rm -rf /srv/x via bash -c; opaque: ...".
func (a *Analysis) Summary() string {
	var parts []string
	for _, c := range a.Commands {
		if c.Wrapper {
			continue
		}
		parts = append(parts, c.String())
	}
	for _, o := range a.Opaque {
		s := "opaque: " + o.Reason
		if len(o.Via) > 0 {
			s += " (via " + strings.Join(o.Via, ", ") + ")"
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "no command"
	}
	out := strings.Join(parts, "; ")
	if len(out) > 600 {
		out = strings.ToValidUTF8(out[:600], "") + "…"
	}
	return out
}

// String is the command as parsed: name, arguments and what it ran through.
func (c Command) String() string {
	var b strings.Builder
	b.WriteString(quoteWord(c.displayName()))
	for i, x := range c.Args {
		b.WriteByte(' ')
		if c.ArgLiteral(i) {
			b.WriteString(quoteWord(x))
		} else {
			b.WriteString(x)
		}
	}
	if len(c.Via) > 0 {
		b.WriteString(" via " + strings.Join(c.Via, ", "))
	}
	return b.String()
}

func (c Command) displayName() string {
	if c.Path != "" {
		return c.Path
	}
	return c.Name
}

func quoteWord(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`;&|<>(){}*?[]#~!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func baseName(p string) (name, dir string) {
	if !strings.Contains(p, "/") {
		return p, ""
	}
	p = strings.TrimRight(p, "/")
	return path.Base(p), path.Dir(p)
}
