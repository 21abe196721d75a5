package pipeline

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/opsagent/opsagent/server/webhook"
)

// The stored alerts and headers of every delivery are JSON that
// encoding/json wrote until now, through reflection, for each event on the
// request's goroutine. These writers produce the same bytes for the common
// case directly and hand anything unusual (a string to escape beyond \" and
// \\, a time json.Marshal would refuse) back to encoding/json, so the
// stored text is unchanged; pipeline tests compare both on many inputs.

// plainJSON reports whether s is written as is between quotes by
// encoding/json (printable ASCII without HTML characters, quote or
// backslash), or needs at most \" and \\ (esc).
func plainJSON(s string) (plain, esc bool) {
	for i := 0; i < len(s); i++ {
		switch jsonByte[s[i]] {
		case jsonEsc:
			esc = true
		case jsonOther:
			return false, false
		}
	}
	return true, esc
}

// jsonByte classes the bytes of a string for plainJSON.
var jsonByte = func() (t [256]uint8) {
	for c := range t {
		switch {
		case c == '"' || c == '\\':
			t[c] = jsonEsc
		case c < 0x20 || c >= 0x7f || c == '<' || c == '>' || c == '&':
			t[c] = jsonOther
		}
	}
	return t
}()

const (
	jsonPlain = iota // written as it is
	jsonEsc          // \" or \\
	jsonOther        // anything else: encoding/json decides
)

// appendJSONString appends s as json.Marshal writes it.
func appendJSONString(b []byte, s string) []byte {
	plain, esc := plainJSON(s)
	if !plain {
		q, _ := json.Marshal(s)
		return append(b, q...)
	}
	b = append(b, '"')
	if !esc {
		b = append(b, s...)
	} else {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c == '"' || c == '\\' {
				b = append(b, '\\', c)
			} else {
				b = append(b, c)
			}
		}
	}
	return append(b, '"')
}

// alertsJSON is json.Marshal(alerts) as a string ("" where Marshal fails,
// as Ingest stored it).
func alertsJSON(alerts []webhook.Alert) string {
	bp := encBufs.Get().(*[]byte)
	defer encBufs.Put(bp)
	b, ok := appendAlerts((*bp)[:0], alerts)
	if cap(b) <= maxPooledBuf {
		*bp = b
	}
	if ok {
		return string(b)
	}
	m, _ := json.Marshal(alerts)
	return string(m)
}

// encBufs are the scratch buffers alertsJSON writes into: only the final
// string is allocated per event.
var encBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// maxPooledBuf keeps a burst of large batches from pinning large buffers.
const maxPooledBuf = 64 << 10

// appendAlerts writes alerts as encoding/json does; false when a time is
// not plain UTC within years 0-9999 (encoding/json then decides).
func appendAlerts(b []byte, alerts []webhook.Alert) ([]byte, bool) {
	if alerts == nil {
		return append(b, "null"...), true
	}
	b = append(b, '[')
	for i := range alerts {
		a := &alerts[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"source":`...)
		b = appendJSONString(b, a.Source)
		b = append(b, `,"title":`...)
		b = appendJSONString(b, a.Title)
		b = append(b, `,"severity":`...)
		b = appendJSONString(b, a.Severity)
		b = append(b, `,"status":`...)
		b = appendJSONString(b, a.Status)
		b = append(b, `,"fingerprint":`...)
		b = appendJSONString(b, a.Fingerprint)
		b = append(b, `,"group_key":`...)
		b = appendJSONString(b, a.GroupKey)
		b = append(b, `,"labels":`...)
		b = appendStringMap(b, a.Labels)
		b = append(b, `,"links":`...)
		if a.Links == nil {
			b = append(b, "null"...)
		} else {
			b = append(b, '[')
			for k, l := range a.Links {
				if k > 0 {
					b = append(b, ',')
				}
				b = appendJSONString(b, l)
			}
			b = append(b, ']')
		}
		b = append(b, `,"starts_at":`...)
		t := a.StartsAt
		if t.Location() != time.UTC || t.Year() < 0 || t.Year() > 9999 {
			return b, false
		}
		b = append(b, '"')
		b = t.AppendFormat(b, time.RFC3339Nano)
		b = append(b, '"')
		b = append(b, `,"summary":`...)
		b = appendJSONString(b, a.Summary)
		b = append(b, '}')
	}
	return append(b, ']'), true
}

// appendStringMap writes m with sorted keys, as encoding/json does.
func appendStringMap(b []byte, m map[string]string) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	var arr [16]string
	keys := arr[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		b = appendJSONString(b, m[k])
	}
	return append(b, '}')
}

// headersJSON keeps the non-credential headers of a delivery, bounded: a
// JSON object of lower-case names to comma-joined values, as a map the
// same size and Marshal would give, without the map (nor, for ASCII names,
// a lower-cased copy of each).
func headersJSON(h http.Header) string {
	type kv struct{ k, v string } // k as sent; its lower case is the key
	var arr [24]kv
	out := arr[:0]
	for name, vals := range h {
		if webhook.IsCredentialHeader(name) || len(out) == maxHeaders {
			continue
		}
		v := strings.Join(vals, ", ")
		if len(v) > maxHeaderSz {
			v = v[:maxHeaderSz]
		}
		if !isASCII(name) {
			name = strings.ToLower(name) // Unicode case rules: ToLower decides
		}
		if j := slices.IndexFunc(out, func(e kv) bool { return lowerEq(e.k, name) }); j >= 0 {
			out[j].v = v // two spellings of one name: the later, as a map keeps
			continue
		}
		out = append(out, kv{name, v})
	}
	slices.SortFunc(out, func(a, b kv) int { return lowerCmp(a.k, b.k) })
	b := make([]byte, 0, 512)
	b = append(b, '{')
	for i, e := range out {
		if i > 0 {
			b = append(b, ',')
		}
		if plain, esc := plainJSON(e.k); plain && !esc {
			b = append(b, '"')
			for j := 0; j < len(e.k); j++ {
				b = append(b, lowerASCII(e.k[j]))
			}
			b = append(b, '"')
		} else {
			b = appendJSONString(b, strings.ToLower(e.k))
		}
		b = append(b, ':')
		b = appendJSONString(b, e.v)
	}
	return string(append(b, '}'))
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// lowerEq and lowerCmp compare the ASCII lower case of a and b (names that
// are not ASCII are lower-cased already, and have no upper-case ASCII).
func lowerEq(a, b string) bool { return lowerCmp(a, b) == 0 }

func lowerCmp(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if x, y := lowerASCII(a[i]), lowerASCII(b[i]); x != y {
			return int(x) - int(y)
		}
	}
	return len(a) - len(b)
}
