package webhook

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// The fast reader of decodeAM: a JSON walker for the plain shape of an
// Alertmanager payload that answers "not sure" (false) for anything
// encoding/json might treat differently.

// amReader walks b; s is the same bytes as one string, so decoded values
// without escapes are substrings of it rather than an allocation each.
type amReader struct {
	b []byte
	s string
	i int
}

// maxAMDepth bounds the nesting the skipper follows (encoding/json's own
// limit is 10000; deeper bodies take its path and its error).
const maxAMDepth = 512

func (r *amReader) ws() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// next skips whitespace and returns the next byte (0 at the end).
func (r *amReader) next() byte {
	r.ws()
	if r.i < len(r.b) {
		return r.b[r.i]
	}
	return 0
}

// object reads an object's members, calling member with each key (the
// reader then stands on the member's value, which member must consume).
func (r *amReader) object(member func(key string) bool) bool {
	if r.next() != '{' {
		return false
	}
	r.i++
	if r.next() == '}' {
		r.i++
		return true
	}
	for {
		if r.next() != '"' {
			return false
		}
		key, ok := r.str()
		if !ok || r.next() != ':' {
			return false
		}
		r.i++
		r.ws()
		if !member(key) {
			return false
		}
		switch r.next() {
		case ',':
			r.i++
		case '}':
			r.i++
			return true
		default:
			return false
		}
	}
}

// field checks a key against a struct's field names (exact spelling):
// bit is the field's bit in seen, -1 for a key of no field. A key that
// matches a field only case-insensitively, or a repeated field, is not for
// the fast path (encoding/json folds case, and a repeat merges maps).
func field(key string, names []string, seen *uint32) (int, bool) {
	for k, n := range names {
		if key == n {
			if *seen&(1<<k) != 0 {
				return 0, false
			}
			*seen |= 1 << k
			return k, true
		}
	}
	for _, n := range names {
		if asciiFoldEq(key, n) {
			return 0, false
		}
	}
	for i := 0; i < len(key); i++ {
		if key[i] >= utf8.RuneSelf {
			return 0, false // Unicode folding (the Kelvin sign is a k)
		}
	}
	return -1, true
}

func asciiFoldEq(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// optStr reads a string field; null leaves it as it is (encoding/json's
// rule); any other type is not for the fast path.
func (r *amReader) optStr(dst *string) bool {
	if r.lit("null") {
		return true
	}
	if r.next() != '"' {
		return false
	}
	s, ok := r.str()
	*dst = s
	return ok
}

// strMap reads a map[string]string field: null is a nil map, {} an empty
// one; a value that is not a string is not for the fast path. A nil dst
// checks the map without keeping it.
func (r *amReader) strMap(dst *map[string]string) bool {
	if r.lit("null") {
		if dst != nil {
			*dst = nil
		}
		return true
	}
	var m map[string]string
	if dst != nil {
		m = map[string]string{}
		*dst = m
	}
	return r.object(func(key string) bool {
		if r.next() != '"' {
			return false
		}
		v, ok := r.str()
		if m != nil {
			m[key] = v // a repeated key: the last wins, as in encoding/json
		}
		return ok
	})
}

// strPicks reads a map[string]string field as strMap does (the same
// checks), handing each key and value to pick instead of keeping a map.
func (r *amReader) strPicks(pick func(key, v string)) bool {
	if r.lit("null") {
		return true
	}
	return r.object(func(key string) bool {
		if r.next() != '"' {
			return false
		}
		v, ok := r.str()
		if ok {
			pick(key, v)
		}
		return ok
	})
}

// lit consumes the literal l when it comes next.
func (r *amReader) lit(l string) bool {
	if r.next() == l[0] && len(r.b)-r.i >= len(l) && r.s[r.i:r.i+len(l)] == l {
		r.i += len(l)
		return true
	}
	return false
}

// str reads a string (the reader stands on its opening quote). Plain
// strings are substrings of r.s; one with escapes or invalid UTF-8 is
// decoded by encoding/json, whose replacement rules then apply.
func (r *amReader) str() (string, bool) {
	start := r.i
	r.i++
	plain, short := true, true // short: only one-letter escapes
	for r.i < len(r.b) {
		b, i := r.b, r.i // locals: the loop keeps them in registers
		for i < len(b) && strPlain[b[i]] {
			i++ // the common bytes, without the cases below
		}
		r.i = i
		if r.i == len(r.b) {
			break
		}
		c := r.b[r.i]
		switch {
		case c == '"':
			r.i++
			if plain {
				return r.s[start+1 : r.i-1], true
			}
			if short {
				return unescapeShort(r.s[start+1 : r.i-1]), true
			}
			var s string
			if err := json.Unmarshal(r.b[start:r.i], &s); err != nil {
				return "", false
			}
			return s, true
		case c == '\\':
			if r.i+1 < len(r.b) && r.b[r.i+1] == 'u' {
				short = false // \uXXXX: encoding/json's surrogate rules apply
			}
			if !r.escape() {
				return "", false
			}
			plain = false
		case c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			r.i++
		default:
			rn, n := utf8.DecodeRune(r.b[r.i:])
			if rn == utf8.RuneError && n == 1 {
				plain, short = false, false // encoding/json replaces it
			}
			r.i += n
		}
	}
	return "", false
}

// strPlain marks the bytes a string holds as they are: ASCII from space
// on, but for the quote and the backslash.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// unescapeShort decodes a string whose escapes are all one letter (the
// quotes of Alertmanager's groupKey), checked by escape: the runs between
// escapes are copied whole.
func unescapeShort(s string) string {
	var out strings.Builder
	out.Grow(len(s))
	for {
		k := strings.IndexByte(s, '\\')
		if k < 0 {
			out.WriteString(s)
			return out.String()
		}
		out.WriteString(s[:k])
		c := s[k+1]
		switch c {
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		} // " \ / stand for themselves
		out.WriteByte(c)
		s = s[k+2:]
	}
}

// escape checks the escape sequence at r.i and steps over it.
func (r *amReader) escape() bool {
	if r.i+1 >= len(r.b) {
		return false
	}
	switch r.b[r.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		r.i += 2
		return true
	case 'u':
		if r.i+6 > len(r.b) {
			return false
		}
		for _, h := range r.b[r.i+2 : r.i+6] {
			if !isHex(h) {
				return false
			}
		}
		r.i += 6
		return true
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// skip steps over a value of a field the payload does not keep, checking
// it is valid JSON as encoding/json would.
func (r *amReader) skip(depth int) bool {
	if depth > maxAMDepth {
		return false
	}
	switch c := r.next(); {
	case c == '"':
		return r.skipStr()
	case c == '{':
		return r.object(func(string) bool { return r.skip(depth + 1) })
	case c == '[':
		r.i++
		if r.next() == ']' {
			r.i++
			return true
		}
		for {
			if !r.skip(depth + 1) {
				return false
			}
			switch r.next() {
			case ',':
				r.i++
			case ']':
				r.i++
				return true
			default:
				return false
			}
		}
	case c == '-' || '0' <= c && c <= '9':
		return r.number()
	default:
		return r.lit("true") || r.lit("false") || r.lit("null")
	}
}

// skipStr steps over a string without decoding it (encoding/json's scanner
// checks escapes and control characters, not UTF-8).
func (r *amReader) skipStr() bool {
	r.i++
	for r.i < len(r.b) {
		c := r.b[r.i]
		switch {
		case c == '"':
			r.i++
			return true
		case c == '\\':
			if !r.escape() {
				return false
			}
		case c < 0x20:
			return false
		default:
			r.i++
		}
	}
	return false
}

// number steps over a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (r *amReader) number() bool {
	b, i := r.b, r.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() bool {
		j := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		return i > j
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	r.i = i
	return true
}
