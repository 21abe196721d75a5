package server

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"
)

// NewLogHandler is the server's log handler: slog's own text or JSON
// handler over w, plus a direct writer for the access line (one per
// request). The access line comes out byte for byte as slog would write
// it; it only skips slog's per-record machinery (the caller's stack, the
// attribute list, the per-value kind switch), which under a webhook storm
// cost more than the rest of the line. Anything the direct writer is not
// sure of (a value slog would quote or escape) goes through slog itself.
func NewLogHandler(w io.Writer, level slog.Leveler, json bool) slog.Handler {
	out := &logOutput{w: w}
	out.idle.L = &out.mu
	_, out.queue = w.(*os.File)
	opts := &slog.HandlerOptions{Level: level}
	h := &logHandler{out: out, json: json}
	if json {
		h.Handler = slog.NewJSONHandler(out, opts)
	} else {
		h.Handler = slog.NewTextHandler(out, opts)
	}
	return h
}

// logHandler is slog's handler with the access line's direct writer. Both
// write through one logOutput, so lines never interleave; loggers derived
// with With or WithGroup are slog's own (over the same output).
type logHandler struct {
	slog.Handler
	out  *logOutput
	json bool
}

// logOutput serializes the lines written to the log. Access lines come in
// bursts (a group commit acknowledges a hundred deliveries at once): on a
// file (stderr), an access line that finds another line being written is
// queued, and the goroutine writing writes the queue after its own line,
// so a burst costs a few write calls rather than one each. Every other
// line is written before its Write returns, after what is queued.
// Outputs that are not files (tests' buffers) get every line before Write
// returns.
type logOutput struct {
	mu      sync.Mutex
	idle    sync.Cond // signalled when busy clears
	w       io.Writer
	queue   bool   // access lines may be queued (w is a file)
	busy    bool   // a goroutine is writing; it writes pending before it clears busy
	pending []byte // queued access lines
	spare   []byte // pending's previous buffer, for reuse
}

// maxPendingLog bounds the queue: past it (a stalled stderr) access lines
// wait like any other.
const maxPendingLog = 1 << 20

func (l *logOutput) Write(b []byte) (int, error) { return l.write(b, false) }

// write writes b; mayQueue lets an access line be queued behind a write
// under way instead of waiting for it.
func (l *logOutput) write(b []byte, mayQueue bool) (int, error) {
	l.mu.Lock()
	if l.busy && mayQueue && l.queue && len(l.pending)+len(b) <= maxPendingLog {
		l.pending = append(l.pending, b...)
		l.mu.Unlock()
		return len(b), nil
	}
	for l.busy {
		l.idle.Wait()
	}
	l.busy = true
	l.mu.Unlock()
	n, err := l.w.Write(b)
	l.mu.Lock()
	for len(l.pending) > 0 {
		out := l.pending
		l.pending = l.spare[:0]
		l.mu.Unlock()
		_, _ = l.w.Write(out) // nobody to report it to: slog drops write errors too
		l.mu.Lock()
		if cap(out) <= maxPendingLog {
			l.spare = out
		}
	}
	l.busy = false
	l.idle.Signal()
	l.mu.Unlock()
	return n, err
}

// accessLine is what the access log says about one request: ids and the
// route template, never the raw path (it may carry tokens), a body or a
// header value. Empty optional fields are left out.
type accessLine struct {
	requestID, method, route string
	status                   int
	durationMS               float64
	bytes                    int64
	ip                       string
	hasUser                  bool // user_id is written (maybe empty) when the caller authenticated
	userID, orgID, keyID     string
	projectID                string
}

// attrs is the line for slog, in the order the direct writer uses.
// request_id comes first, where a logger made With it would put it.
func (a *accessLine) attrs() []slog.Attr {
	attrs := make([]slog.Attr, 0, 12)
	attrs = append(attrs, slog.String("request_id", a.requestID), slog.String("method", a.method), slog.String("route", a.route),
		slog.Int("status", a.status), slog.Float64("duration_ms", a.durationMS), slog.Int64("bytes", a.bytes), slog.String("ip", a.ip))
	if a.hasUser {
		attrs = append(attrs, slog.String("user_id", a.userID))
		if a.orgID != "" {
			attrs = append(attrs, slog.String("org_id", a.orgID))
		}
		if a.keyID != "" {
			attrs = append(attrs, slog.String("key_id", a.keyID))
		}
	}
	if a.projectID != "" {
		attrs = append(attrs, slog.String("project_id", a.projectID))
	}
	return attrs
}

// logAccess writes the access line (the caller checked the level).
func logAccess(ctx context.Context, log *slog.Logger, level slog.Level, a *accessLine) {
	if h, ok := log.Handler().(*logHandler); ok && h.write(time.Now(), level, a) {
		return
	}
	log.LogAttrs(ctx, level, "request", a.attrs()...)
}

var accessBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// write writes the line as slog's handler would for a record made at t;
// false (nothing written) when a value is not plain.
func (h *logHandler) write(t time.Time, level slog.Level, a *accessLine) bool {
	if !plain(a.requestID) || !plain(a.method) || !plain(a.route) || !plain(a.ip) ||
		(a.hasUser && !plain(a.userID)) || !plainOrEmpty(a.orgID) || !plainOrEmpty(a.keyID) || !plainOrEmpty(a.projectID) {
		return false
	}
	if y := t.Year(); y < 0 || y >= 10000 {
		return false // slog reports it in its own way
	}
	floatFmt := byte('g') // slog's text: strconv's shortest %g
	if h.json {
		// slog's JSON writes floats as encoding/json does: %f within
		// [1e-6, 1e21), an exponent outside (left to slog).
		if d := a.durationMS; d != 0 && (d < 1e-6 || d >= 1e21) {
			return false
		}
		floatFmt = 'f'
	}
	bp := accessBufs.Get().(*[]byte)
	b := (*bp)[:0]
	if h.json {
		b = append(b, `{"time":"`...)
		b = t.Round(0).AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","level":"`...)
		b = append(b, level.String()...)
		b = append(b, `","msg":"request"`...)
	} else {
		b = append(b, "time="...)
		b = appendRFC3339Millis(b, t.Round(0))
		b = append(b, " level="...)
		b = append(b, level.String()...)
		b = append(b, " msg=request"...)
	}
	b = h.str(b, "request_id", a.requestID)
	b = h.str(b, "method", a.method)
	b = h.str(b, "route", a.route)
	b = strconv.AppendInt(h.key(b, "status"), int64(a.status), 10)
	b = strconv.AppendFloat(h.key(b, "duration_ms"), a.durationMS, floatFmt, -1, 64)
	b = strconv.AppendInt(h.key(b, "bytes"), a.bytes, 10)
	b = h.str(b, "ip", a.ip)
	if a.hasUser {
		b = h.str(b, "user_id", a.userID)
		if a.orgID != "" {
			b = h.str(b, "org_id", a.orgID)
		}
		if a.keyID != "" {
			b = h.str(b, "key_id", a.keyID)
		}
	}
	if a.projectID != "" {
		b = h.str(b, "project_id", a.projectID)
	}
	if h.json {
		b = append(b, '}')
	}
	b = append(b, '\n')
	_, _ = h.out.write(b, true)
	*bp = b
	accessBufs.Put(bp)
	return true
}

// key appends a separator and key (both formats' keys here are plain).
func (h *logHandler) key(b []byte, k string) []byte {
	if h.json {
		b = append(b, `,"`...)
		b = append(b, k...)
		return append(b, `":`...)
	}
	b = append(b, ' ')
	b = append(b, k...)
	return append(b, '=')
}

// str appends a key and a plain string value.
func (h *logHandler) str(b []byte, k, v string) []byte {
	b = h.key(b, k)
	if h.json {
		b = append(b, '"')
		b = append(b, v...)
		return append(b, '"')
	}
	return append(b, v...)
}

// plain: a non-empty string that both of slog's handlers write as it is
// (no quotes in text, no escapes in JSON): printable ASCII but for space,
// '"', backslash and '='.
func plain(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !plainByte[s[i]] {
			return false
		}
	}
	return true
}

var plainByte = func() (t [256]bool) {
	for c := '!'; c <= '~'; c++ {
		t[c] = c != '"' && c != '\\' && c != '='
	}
	return t
}()

func plainOrEmpty(s string) bool { return s == "" || plain(s) }

// appendRFC3339Millis is slog's text time: RFC 3339 with exactly three
// fractional digits (truncated).
func appendRFC3339Millis(b []byte, t time.Time) []byte {
	const prefixLen = len("2006-01-02T15:04:05.000")
	n := len(b)
	t = t.Truncate(time.Millisecond).Add(time.Millisecond / 10)
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b[:n+prefixLen], b[n+prefixLen+1:]...) // drop the 4th digit
}
