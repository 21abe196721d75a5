package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Redacted replaces every value a redaction glob matches.
const Redacted = "[REDACTED]"

// maxRedactDepth bounds recursion on hostile nesting ("[[[[...").
const maxRedactDepth = 512

// Redact replaces the values that globs match (syntax: see ValidateGlob)
// with "[REDACTED]" before the payload is stored. When
// nothing matches, body is returned unchanged; otherwise the result is
// the same document in compact form, keys in their original order. An
// invalid glob is CodeInvalidGlob, a body that is not one JSON value is
// CodeInvalidPayload.
func Redact(body []byte, globs []string) ([]byte, error) {
	if len(globs) > MaxGlobs {
		return nil, newError(CodeInvalidGlob, "at most "+strconv.Itoa(MaxGlobs)+" redaction globs")
	}
	compiled := make([]glob, 0, len(globs))
	for _, g := range globs {
		c, err := compileGlob(g)
		if err != nil {
			return nil, err
		}
		compiled = append(compiled, c)
	}
	r := redactor{globs: compiled}
	r.dec = json.NewDecoder(bytes.NewReader(body))
	r.dec.UseNumber()
	start := make([]uint64, len(compiled))
	for i, g := range compiled {
		start[i] = g.start()
	}
	if err := r.value(start, 0); err != nil {
		return nil, invalidJSON(err)
	}
	if _, err := r.dec.Token(); err != io.EOF {
		return nil, newError(CodeInvalidPayload, "body has data after the JSON value")
	}
	if !r.changed {
		return body, nil
	}
	return r.out.Bytes(), nil
}

func invalidJSON(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return wrapError(CodeInvalidPayload, "body is not valid JSON: "+jsonErrMsg(err), err)
}

type redactor struct {
	dec     *json.Decoder
	out     bytes.Buffer
	globs   []glob
	changed bool
}

// value copies the next JSON value, descending while some glob can still
// match below it.
func (r *redactor) value(st []uint64, depth int) error {
	if depth > maxRedactDepth {
		return newError(CodeInvalidPayload, "body nests deeper than "+strconv.Itoa(maxRedactDepth))
	}
	tok, err := r.dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		closing := byte('}')
		if t == '[' {
			closing = ']'
		}
		r.out.WriteByte(byte(t))
		for i := 0; r.dec.More(); i++ {
			if i > 0 {
				r.out.WriteByte(',')
			}
			key := strconv.Itoa(i)
			if t == '{' {
				k, err := r.dec.Token()
				if err != nil {
					return err
				}
				key, _ = k.(string)
				writeString(&r.out, key)
				r.out.WriteByte(':')
			}
			if err := r.member(st, strings.ToLower(key), depth); err != nil {
				return err
			}
		}
		if _, err := r.dec.Token(); err != nil {
			return err
		}
		r.out.WriteByte(closing)
	case string:
		writeString(&r.out, t)
	case json.Number:
		r.out.WriteString(t.String())
	case bool:
		r.out.WriteString(strconv.FormatBool(t))
	case nil:
		r.out.WriteString("null")
	}
	return nil
}

// member handles the value under key: redact it, copy it whole when no
// glob can match inside, or walk into it.
func (r *redactor) member(st []uint64, key string, depth int) error {
	next := make([]uint64, len(st))
	live := false
	for i, g := range r.globs {
		next[i] = g.step(st[i], key)
		if g.final(next[i]) {
			r.changed = true
			r.out.WriteString(`"` + Redacted + `"`)
			var skip json.RawMessage
			return r.dec.Decode(&skip)
		}
		live = live || next[i] != 0
	}
	if !live {
		var raw json.RawMessage
		if err := r.dec.Decode(&raw); err != nil {
			return err
		}
		return json.Compact(&r.out, raw)
	}
	return r.value(next, depth+1)
}

// writeString writes s as a JSON string without HTML escaping, so stored
// payloads read like the originals.
func writeString(b *bytes.Buffer, s string) {
	const hexDigits = "0123456789abcdef"
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == '\u2028' || r == '\u2029':
			b.WriteString(`\u`)
			for shift := 12; shift >= 0; shift -= 4 {
				b.WriteByte(hexDigits[(r>>shift)&0xf])
			}
		case r == utf8.RuneError:
			b.WriteString(`\ufffd`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}
