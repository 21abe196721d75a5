package shellscan

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// arg is one field of a command after quote removal and brace expansion.
// pattern keeps unquoted glob characters live and quoted ones escaped with
// a backslash; text is the value with the quoting gone. An arg that is not
// literal (a variable, a substitution) has lit false and text its source.
type arg struct {
	text    string
	pattern string
	lit     bool
	glob    bool
}

// maxFields bounds brace expansion: past it the word is not literal.
const maxFields = 256

// expandWord turns a word into its fields. A word that is not literal is one
// non-literal field spelled as in the source.
func expandWord(w *syntax.Word, src string) []arg {
	if len(w.Parts) == 1 {
		// Fast path: a plain literal, or a single-quoted string.
		switch p := w.Parts[0].(type) {
		case *syntax.Lit:
			if !strings.ContainsAny(p.Value, "\\{*?[") {
				return []arg{{text: p.Value, pattern: p.Value, lit: true}}
			}
		case *syntax.SglQuoted:
			if !p.Dollar {
				e := escapeGlob(p.Value)
				return []arg{{text: p.Value, pattern: e, lit: true}}
			}
		}
	}
	syntax.SplitBraces(w)
	pats, ok := partsPatterns(w.Parts, false)
	if !ok {
		return []arg{{text: nodeSource(w, src)}}
	}
	out := make([]arg, 0, len(pats))
	for _, p := range pats {
		out = append(out, arg{text: unescapePattern(p), pattern: p, lit: true, glob: hasGlob(p)})
	}
	return out
}

// nodeSource is the source text of a node.
func nodeSource(n syntax.Node, src string) string {
	s, e := int(n.Pos().Offset()), int(n.End().Offset())
	if s < 0 || e > len(src) || s > e {
		return "?"
	}
	return src[s:e]
}

// partsPatterns returns the alternatives (brace expansion) of word parts as
// glob patterns, or false when some part is not literal.
func partsPatterns(parts []syntax.WordPart, quoted bool) ([]string, bool) {
	acc := []string{""}
	for _, part := range parts {
		var alts []string
		switch p := part.(type) {
		case *syntax.Lit:
			if quoted {
				alts = []string{escapeGlob(unescapeDouble(p.Value))}
			} else {
				alts = []string{unquotedLit(p.Value)}
			}
		case *syntax.SglQuoted:
			v := p.Value
			if p.Dollar {
				d, ok := decodeANSIC(v)
				if !ok {
					return nil, false
				}
				v = d
			}
			alts = []string{escapeGlob(v)}
		case *syntax.DblQuoted:
			inner, ok := partsPatterns(p.Parts, true)
			if !ok {
				return nil, false
			}
			alts = inner
		case *syntax.BraceExp:
			if p.Sequence {
				seq, ok := braceSequence(p)
				if !ok {
					return nil, false
				}
				alts = seq
				break
			}
			for _, e := range p.Elems {
				inner, ok := partsPatterns(e.Parts, quoted)
				if !ok {
					return nil, false
				}
				alts = append(alts, inner...)
			}
		default:
			return nil, false
		}
		if len(acc)*len(alts) > maxFields {
			return nil, false
		}
		next := make([]string, 0, len(acc)*len(alts))
		for _, a := range acc {
			for _, b := range alts {
				next = append(next, a+b)
			}
		}
		acc = next
	}
	return acc, true
}

// braceSequence expands {1..3} and {a..c}; anything else is not literal.
func braceSequence(b *syntax.BraceExp) ([]string, bool) {
	if len(b.Elems) < 2 {
		return nil, false
	}
	from, to := b.Elems[0].Lit(), b.Elems[1].Lit()
	x, err1 := strconv.Atoi(from)
	y, err2 := strconv.Atoi(to)
	if err1 == nil && err2 == nil {
		if x > y {
			x, y = y, x
		}
		if y-x >= maxFields {
			return nil, false
		}
		var out []string
		for i := x; i <= y; i++ {
			out = append(out, strconv.Itoa(i))
		}
		return out, true
	}
	if len(from) == 1 && len(to) == 1 {
		x, y := from[0], to[0]
		if x > y {
			x, y = y, x
		}
		var out []string
		for c := x; c <= y; c++ {
			out = append(out, escapeGlob(string(c)))
		}
		return out, true
	}
	return nil, false
}

// unquotedLit keeps glob characters live and turns \c into an escaped c.
func unquotedLit(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			i++
			b.WriteString(escapeGlob(string(v[i])))
			continue
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// unescapeDouble removes the backslashes that escape inside double quotes.
func unescapeDouble(v string) string {
	if !strings.Contains(v, "\\") {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) && strings.IndexByte("$`\"\\\n", v[i+1]) >= 0 {
			i++
			if v[i] == '\n' {
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

func escapeGlob(s string) string {
	if !strings.ContainsAny(s, `*?[]\`) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func unescapePattern(p string) string {
	if !strings.Contains(p, "\\") {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+1 < len(p) {
			i++
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

func hasGlob(p string) bool {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '*', '?':
			return true
		case '[':
			// A bracket with no closing one after it is a literal to the
			// shell: "[" and "[[" name the test command, not a pattern.
			if strings.IndexByte(p[i+1:], ']') >= 0 {
				return true
			}
		}
	}
	return false
}

// globRegexp compiles a shell glob (as kept by patterns: backslash escapes)
// into an anchored regular expression. * and ? match any character, the
// slash included, so a pattern can stand for a path or a name.
func globRegexp(p string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString(`^(?s)`)
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch c {
		case '\\':
			if i+1 < len(p) {
				i++
				b.WriteString(regexp.QuoteMeta(string(p[i])))
			}
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		case '[':
			j := strings.IndexByte(p[i+1:], ']')
			if j < 0 {
				b.WriteString(`\[`)
				continue
			}
			if j == 0 { // []...] : a ] first is literal
				k := strings.IndexByte(p[i+2:], ']')
				if k < 0 {
					b.WriteString(`\[`)
					continue
				}
				j = k + 1
			}
			class := p[i+1 : i+1+j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += j + 1
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`$`)
	return regexp.Compile(b.String())
}

// decodeANSIC decodes the body of $'...'.
func decodeANSIC(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'e', 'E':
			b.WriteByte(27)
		case 'f':
			b.WriteByte(12)
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte(11)
		case '\\', '\'', '"', '?':
			b.WriteByte(c)
		case 'x', 'u', 'U':
			max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
			j := i + 1
			for j < len(s) && j-i-1 < max && strings.IndexByte("0123456789abcdefABCDEF", s[j]) >= 0 {
				j++
			}
			if j == i+1 {
				return "", false
			}
			n, _ := strconv.ParseUint(s[i+1:j], 16, 32)
			if c == 'x' {
				b.WriteByte(byte(n))
			} else {
				if !utf8.ValidRune(rune(n)) {
					return "", false
				}
				b.WriteRune(rune(n))
			}
			i = j - 1
		case 'c':
			if i+1 >= len(s) {
				return "", false
			}
			i++
			b.WriteByte(s[i] & 0x1f)
		default:
			if c >= '0' && c <= '7' {
				j := i
				for j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7' {
					j++
				}
				n, _ := strconv.ParseUint(s[i:j], 8, 16)
				b.WriteByte(byte(n))
				i = j - 1
				continue
			}
			b.WriteByte('\\')
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// literalDoc is the text of a here-document body, or false when it
// expands something at run time.
func literalDoc(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", true
	}
	var b strings.Builder
	for _, p := range w.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
			b.WriteString(x.Value)
		case *syntax.SglQuoted:
			b.WriteString("'" + x.Value + "'")
		case *syntax.DblQuoted:
			s, ok := literalDoc(&syntax.Word{Parts: x.Parts})
			if !ok {
				return "", false
			}
			b.WriteString(`"` + s + `"`)
		default:
			return "", false
		}
	}
	return b.String(), true
}

// literalString is a word's value when it is literal and one field.
func literalString(w *syntax.Word, src string) (string, bool) {
	fs := expandWord(w, src)
	if len(fs) != 1 || !fs[0].lit || fs[0].glob {
		return "", false
	}
	return fs[0].text, true
}
