package connector

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// AllowList is a list of command patterns; a command runs only when one
// matches the whole command line. The same syntax serves the server-side
// list of a connector (set through the API) and the host's own file
// (--allow FILE, owned by the host's administrator, which has the last word).
//
// Pattern syntax, one per line in a file ('#' starts a comment):
//
//	df -h                    exactly this command (runs of spaces are one space)
//	systemctl status *       '*' matches any text without shell control characters,
//	                         so it does not allow "systemctl status x; rm -rf /"
//	journalctl **            '**' matches anything at all, control characters included
//	re:^uptime( -p)?$        a regular expression over the whole command line
//
// An empty list allows every command.
type AllowList struct {
	patterns []string
	res      []*regexp.Regexp
}

// shellControl are the characters that chain, substitute or redirect in a
// shell command line; a single '*' never matches them.
const shellControl = ";&|`$()<>\n\r\\"

// CompileAllowList compiles patterns; a bad one is an error naming it.
func CompileAllowList(patterns []string) (*AllowList, error) {
	a := &AllowList{}
	for _, p := range patterns {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		re, err := compilePattern(p)
		if err != nil {
			return nil, fmt.Errorf("allow-list pattern %q: %v", p, err)
		}
		a.patterns = append(a.patterns, p)
		a.res = append(a.res, re)
	}
	return a, nil
}

func compilePattern(p string) (*regexp.Regexp, error) {
	if rx, ok := strings.CutPrefix(p, "re:"); ok {
		return regexp.Compile(`\A(?:` + rx + `)\z`)
	}
	var b strings.Builder
	b.WriteString(`\A`)
	words := strings.Fields(p)
	for i, w := range words {
		if i > 0 {
			b.WriteString(" ")
		}
		for len(w) > 0 {
			switch {
			case strings.HasPrefix(w, "**"):
				b.WriteString(`(?s:.*)`)
				w = w[2:]
			case w[0] == '*':
				b.WriteString(`[^` + regexp.QuoteMeta(shellControl) + `]*`)
				w = w[1:]
			default:
				j := strings.IndexByte(w, '*')
				if j < 0 {
					j = len(w)
				}
				b.WriteString(regexp.QuoteMeta(w[:j]))
				w = w[j:]
			}
		}
	}
	b.WriteString(`\z`)
	return regexp.Compile(b.String())
}

// ReadAllowFile reads a host allow-list file.
func ReadAllowFile(path string) (*AllowList, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseAllow(f)
}

func parseAllow(r io.Reader) (*AllowList, error) {
	var lines []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		lines = append(lines, line)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return CompileAllowList(lines)
}

// Empty reports a list that allows everything.
func (a *AllowList) Empty() bool { return a == nil || len(a.res) == 0 }

// Allows reports whether the command may run. Runs of whitespace outside
// regular-expression patterns count as one space.
func (a *AllowList) Allows(command string) bool {
	if a.Empty() {
		return true
	}
	collapsed := collapseBlanks(command)
	for i, re := range a.res {
		subject := collapsed
		if strings.HasPrefix(a.patterns[i], "re:") {
			subject = strings.TrimSpace(command)
		}
		if re.MatchString(subject) {
			return true
		}
	}
	return false
}

// collapseBlanks turns runs of spaces and tabs into one space and trims
// them at the ends. Newlines stay: they separate commands in a shell.
func collapseBlanks(s string) string {
	var b strings.Builder
	blank := false
	for _, r := range strings.Trim(s, " \t") {
		if r == ' ' || r == '\t' {
			blank = true
			continue
		}
		if blank {
			b.WriteByte(' ')
			blank = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Len is the number of patterns.
func (a *AllowList) Len() int {
	if a == nil {
		return 0
	}
	return len(a.res)
}
