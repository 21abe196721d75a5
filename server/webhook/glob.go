package webhook

import (
	"strconv"
	"strings"
)

// Limits on redaction globs.
const (
	MaxGlobLength   = 256
	MaxGlobSegments = 32
	MaxGlobs        = 64
)

// glob is a compiled redaction glob; each segment is either "**" or a
// wildcard pattern split at its stars.
type glob struct {
	segs []globSeg
}

type globSeg struct {
	deep  bool     // "**"
	parts []string // literal pieces between stars, lowercased; len(parts)-1 stars
}

// ValidateGlob reports whether g is a valid redaction glob, with a message
// fit for a 422 response. Globs address values inside a JSON document by
// path:
//
//   - A path is the sequence of object keys and array indexes from the
//     root to a value; indexes are written in decimal ("alerts.0.labels").
//   - A glob is segments separated by ".". Matching is case-insensitive.
//   - "*" inside a segment matches any run of characters within one key
//     ("*token*" matches "x_token_id"); a segment that is just "*" matches
//     any single key or index ("alerts.*.annotations.token").
//   - A segment "**" matches zero or more segments ("**.password" matches
//     "password" at the top level and at any depth).
//   - "\." "\*" and "\\" stand for a literal dot, star and backslash, for
//     keys such as "app.kubernetes.io/name".
//   - A glob matches a value, not just a leaf: "credentials" redacts the
//     whole object under that key.
//
// Invalid: an empty glob or segment ("a..b", ".a"), "**" mixed with other
// characters ("a**"), a trailing lone backslash, a glob made only of "**"
// (use metadata-only retention to keep no payload at all), more than
// MaxGlobLength bytes or MaxGlobSegments segments.
func ValidateGlob(g string) error {
	_, err := compileGlob(g)
	return err
}

func compileGlob(g string) (glob, error) {
	bad := func(why string) (glob, error) {
		return glob{}, newError(CodeInvalidGlob, "redaction glob "+strconv.Quote(truncate(g, 80))+": "+why)
	}
	if g == "" {
		return bad("is empty")
	}
	if len(g) > MaxGlobLength {
		return bad("is longer than " + strconv.Itoa(MaxGlobLength) + " bytes")
	}
	var (
		out     glob
		parts   []string
		cur     strings.Builder
		escaped bool
		raw     strings.Builder // the segment as written, to spot "**"
	)
	flush := func() bool {
		parts = append(parts, strings.ToLower(cur.String()))
		seg := globSeg{parts: parts}
		switch {
		case raw.String() == "**":
			seg = globSeg{deep: true}
		case strings.Contains(raw.String(), "**"):
			return false
		case raw.Len() == 0:
			return false
		}
		out.segs = append(out.segs, seg)
		parts, cur, raw = nil, strings.Builder{}, strings.Builder{}
		return true
	}
	for _, r := range g {
		switch {
		case escaped:
			cur.WriteRune(r)
			raw.WriteString("\\" + string(r))
			escaped = false
		case r == '\\':
			escaped = true
		case r == '*':
			parts = append(parts, strings.ToLower(cur.String()))
			cur.Reset()
			raw.WriteRune(r)
		case r == '.':
			if !flush() {
				return bad("has an empty segment or a \"**\" mixed with other characters")
			}
		default:
			cur.WriteRune(r)
			raw.WriteRune(r)
		}
	}
	if escaped {
		return bad("ends with a lone backslash")
	}
	if !flush() {
		return bad("has an empty segment or a \"**\" mixed with other characters")
	}
	if len(out.segs) > MaxGlobSegments {
		return bad("has more than " + strconv.Itoa(MaxGlobSegments) + " segments")
	}
	onlyDeep := true
	for _, s := range out.segs {
		onlyDeep = onlyDeep && s.deep
	}
	if onlyDeep {
		return bad("matches every value; use metadata-only retention instead")
	}
	return out, nil
}

// start is the state set before any path segment: bit i set means
// "segments 0..i-1 matched". "**" lets a state advance without input.
func (g glob) start() uint64 { return g.closure(1) }

func (g glob) closure(st uint64) uint64 {
	for i, s := range g.segs {
		if s.deep && st&(1<<i) != 0 {
			st |= 1 << (i + 1)
		}
	}
	return st
}

// step advances the state set over one path segment (already lowercased).
func (g glob) step(st uint64, key string) uint64 {
	var next uint64
	for i, s := range g.segs {
		if st&(1<<i) == 0 {
			continue
		}
		if s.deep {
			next |= 1 << i
		} else if s.match(key) {
			next |= 1 << (i + 1)
		}
	}
	return g.closure(next)
}

func (g glob) final(st uint64) bool { return st&(1<<len(g.segs)) != 0 }

// match is wildcard matching of one key against literal pieces separated
// by stars: first piece a prefix, last a suffix, the rest found in order.
func (s globSeg) match(key string) bool {
	p := s.parts
	if len(p) == 1 {
		return key == p[0]
	}
	if !strings.HasPrefix(key, p[0]) {
		return false
	}
	key = key[len(p[0]):]
	last := p[len(p)-1]
	for _, mid := range p[1 : len(p)-1] {
		i := strings.Index(key, mid)
		if i < 0 {
			return false
		}
		key = key[i+len(mid):]
	}
	return len(key) >= len(last) && strings.HasSuffix(key, last)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
