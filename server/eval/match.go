package eval

import (
	"fmt"
	"regexp"
	"strings"
)

// compileMatch turns an expectation pattern into a regular expression:
// "/re/" is the expression itself (case-insensitive), anything else is
// words that must appear in that order, case-insensitive, whatever lies
// between them.
func compileMatch(p string) (*regexp.Regexp, error) {
	p = strings.TrimSpace(p)
	if p == "" {
		return nil, fmt.Errorf("an empty pattern matches everything: give words or /a regular expression/")
	}
	if len(p) >= 2 && strings.HasPrefix(p, "/") && strings.HasSuffix(p, "/") {
		re, err := regexp.Compile("(?i)" + p[1:len(p)-1])
		if err != nil {
			return nil, fmt.Errorf("not a regular expression: %v", err)
		}
		return re, nil
	}
	words := strings.Fields(p)
	for i, w := range words {
		words[i] = regexp.QuoteMeta(w)
	}
	return regexp.MustCompile(`(?is)` + strings.Join(words, `.*?`)), nil
}

// callPattern is a must_call / must_not_call entry: a tool name, or
// "tool:regex" over the call's rendered command (or its arguments).
type callPattern struct {
	Tool string
	Args *regexp.Regexp
	Text string
}

func parseCallPattern(s string) (callPattern, error) {
	name, rest, hasArgs := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !toolNamePattern.MatchString(name) {
		return callPattern{}, fmt.Errorf("%q: a tool name (run_command), optionally followed by :regex over its command", s)
	}
	cp := callPattern{Tool: name, Text: s}
	if hasArgs {
		re, err := regexp.Compile(strings.TrimSpace(rest))
		if err != nil {
			return callPattern{}, fmt.Errorf("%q: not a regular expression after the colon: %v", s, err)
		}
		cp.Args = re
	}
	return cp, nil
}

var toolNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func (p callPattern) matches(c CallRecord) bool {
	if c.Tool != p.Tool {
		return false
	}
	return p.Args == nil || p.Args.MatchString(c.Command) || p.Args.MatchString(c.Arguments)
}
