package shellscan

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Pattern matches commands of an analysis. Its text is a command name
// followed by argument tokens, separated by spaces:
//
//	rm                       rm with any arguments
//	systemctl poweroff *     systemctl, first argument poweroff, then anything
//	kill * 1                 kill whose last argument is 1
//	mkfs*                    every name starting with mkfs (mkfs.ext4, ...)
//	find !-delete !-exec* *  find with none of these arguments
//
// The name is a glob matched against the command's base name (a path in
// command position matches by its base name, so /usr/bin/rm is rm). Each
// argument token is a glob for one argument, except a lone * which stands
// for any number of arguments, and !GLOB which requires that no argument
// match GLOB. With only a name, any arguments match.
type Pattern struct {
	Text    string
	nameLit string // the name when it has no glob characters
	name    *regexp.Regexp
	args    []*regexp.Regexp // nil entry: a lone * (any run)
	not     []*regexp.Regexp
	notRaw  []string // the exclusions as written, for option spellings (optionSpelled)
	anyArgs bool
}

// ErrEmptyPattern is a pattern with no command name.
var ErrEmptyPattern = errors.New("a command pattern needs a command name")

// ParsePattern compiles a pattern.
func ParsePattern(text string) (*Pattern, error) {
	toks := strings.Fields(text)
	if len(toks) == 0 {
		return nil, ErrEmptyPattern
	}
	p := &Pattern{Text: strings.Join(toks, " ")}
	if strings.HasPrefix(toks[0], "!") {
		return nil, errors.New("a command pattern starts with a command name, not an exclusion")
	}
	n, _ := baseName(toks[0])
	re, err := globRegexp(n)
	if err != nil {
		return nil, fmt.Errorf("command name %q: %v", toks[0], err)
	}
	p.name = re
	if !hasGlob(n) {
		p.nameLit = unescapePattern(n)
	}
	if len(toks) == 1 {
		p.anyArgs = true
		return p, nil
	}
	for _, t := range toks[1:] {
		if strings.HasPrefix(t, "!") && len(t) > 1 {
			re, err := globRegexp(t[1:])
			if err != nil {
				return nil, fmt.Errorf("argument %q: %v", t, err)
			}
			p.not = append(p.not, re)
			p.notRaw = append(p.notRaw, t[1:])
			continue
		}
		if t == "*" {
			p.args = append(p.args, nil)
			continue
		}
		re, err := globRegexp(t)
		if err != nil {
			return nil, fmt.Errorf("argument %q: %v", t, err)
		}
		p.args = append(p.args, re)
	}
	if len(p.args) == 0 {
		p.anyArgs = true
	}
	return p, nil
}

// MatchName reports whether the command's name can be the pattern's: a
// glob in command position matches every name it can reach.
func (p *Pattern) MatchName(c *Command) bool {
	if !c.Glob {
		if p.nameLit != "" {
			return p.nameLit == c.Name
		}
		return p.name.MatchString(c.Name)
	}
	if p.nameLit == "" {
		return true // two globs: assume they can meet
	}
	re, err := globRegexp(c.Name)
	return err != nil || re.MatchString(p.nameLit)
}

// Match reports whether the command can be one the pattern describes.
// Lenient (for rules that restrict): an unknown argument can be anything,
// any number of words. Strict (for allowing): an unknown argument is
// matched only by a lone *, and fails every exclusion.
func (p *Pattern) Match(c *Command, strict bool) bool {
	if !p.MatchName(c) {
		return false
	}
	if strict && c.Glob {
		return false
	}
	for i, a := range c.Args {
		known := c.ArgLiteral(i)
		for j, re := range p.not {
			if known && (re.MatchString(a) || strict && optionSpelled(p.notRaw[j], a)) {
				return false
			}
			if !known && strict {
				return false
			}
		}
	}
	if p.anyArgs {
		return true
	}
	m := &matcher{toks: p.args, c: c, strict: strict}
	if !strict && !allKnown(c) {
		m.memo = map[[2]int]bool{} // unknown arguments branch three ways
	}
	return m.match(0, 0)
}

// matcher memoises argument matching: unknown arguments branch.
type matcher struct {
	toks   []*regexp.Regexp
	c      *Command
	strict bool
	memo   map[[2]int]bool
}

func (m *matcher) match(ti, ai int) bool {
	if m.memo == nil {
		return matchArgs(m, m.toks, m.c, ti, ai, m.strict)
	}
	key := [2]int{ti, ai}
	if v, ok := m.memo[key]; ok {
		return v
	}
	v := matchArgs(m, m.toks, m.c, ti, ai, m.strict)
	m.memo[key] = v
	return v
}

func matchArgs(m *matcher, toks []*regexp.Regexp, c *Command, ti, ai int, strict bool) bool {
	if ti == len(toks) {
		if ai == len(c.Args) {
			return true
		}
		// An unknown unquoted argument may expand to nothing.
		return !strict && allUnknown(c, ai)
	}
	if toks[ti] == nil {
		for k := ai; k <= len(c.Args); k++ {
			if m.match(ti+1, k) {
				return true
			}
		}
		return false
	}
	if ai == len(c.Args) {
		return false
	}
	if !c.ArgLiteral(ai) {
		if strict {
			return false
		}
		// It can be this token, several tokens, or nothing.
		return m.match(ti+1, ai+1) || m.match(ti+1, ai) || m.match(ti, ai+1)
	}
	return toks[ti].MatchString(c.Args[ai]) && m.match(ti+1, ai+1)
}

func allUnknown(c *Command, from int) bool {
	for i := from; i < len(c.Args); i++ {
		if c.ArgLiteral(i) {
			return false
		}
	}
	return true
}

// patternSet indexes patterns by literal name, so a command is checked
// only against the patterns that can name it.
type patternSet struct {
	byName map[string][]*Pattern
	globs  []*Pattern
	all    []*Pattern
}

func (ps *patternSet) add(p *Pattern) {
	if ps.byName == nil {
		ps.byName = map[string][]*Pattern{}
	}
	ps.all = append(ps.all, p)
	if p.nameLit != "" {
		ps.byName[p.nameLit] = append(ps.byName[p.nameLit], p)
	} else {
		ps.globs = append(ps.globs, p)
	}
}

// match returns the first pattern that matches the command, or nil.
func (ps *patternSet) match(c *Command, strict bool) *Pattern {
	if c.Glob {
		for _, p := range ps.all {
			if p.Match(c, strict) {
				return p
			}
		}
		return nil
	}
	for _, p := range ps.byName[c.Name] {
		if p.Match(c, strict) {
			return p
		}
	}
	for _, p := range ps.globs {
		if p.Match(c, strict) {
			return p
		}
	}
	return nil
}

func allKnown(c *Command) bool {
	for i := range c.Args {
		if !c.ArgLiteral(i) {
			return false
		}
	}
	return true
}
