package vault

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
)

// Redaction replaces every occurrence of a secret in masked text.
const Redaction = "********"

// MinMaskedLen is the shortest value a Masker masks: shorter values ("1",
// "yes") would blank out ordinary text and protect nothing.
const MinMaskedLen = 4

// maxHold bounds what a MaskWriter holds back while a run of overlapping
// matches keeps growing (a secret like "aaaa" inside a long run of "a").
const maxHold = 8 << 10

// Masker replaces secret values in text before it reaches a transcript or a
// log. It is immutable and safe for concurrent use.
//
// Where occurrences overlap (one secret inside or across another), the union
// of their bytes is replaced by a single Redaction, so no byte of any secret
// survives, whichever secret matched first.
type Masker struct {
	secrets [][]byte
	maxLen  int
}

// NewMasker builds a masker for values; duplicates and values shorter than
// MinMaskedLen bytes are ignored.
func NewMasker(values ...string) *Masker {
	m := &Masker{}
	seen := make(map[string]bool, len(values))
	for _, v := range values {
		if len(v) < MinMaskedLen || seen[v] {
			continue
		}
		seen[v] = true
		m.secrets = append(m.secrets, []byte(v))
		m.maxLen = max(m.maxLen, len(v))
	}
	return m
}

// Mask returns s with every occurrence of every secret replaced by Redaction.
func (m *Masker) Mask(s string) string {
	if len(m.secrets) == 0 {
		return s
	}
	b := []byte(s)
	spans := m.spans(b)
	if len(spans) == 0 {
		return s
	}
	var out strings.Builder
	out.Grow(len(s))
	appendMasked(&out, b, spans)
	return out.String()
}

// span is a half-open byte range [start, end) covered by secrets.
type span struct{ start, end int }

// spans finds every occurrence of every secret in b, overlapping ones
// included, and merges overlapping occurrences. Adjacent ones stay separate,
// so the result does not depend on where a stream was cut.
func (m *Masker) spans(b []byte) []span {
	var all []span
	for _, sec := range m.secrets {
		for off := 0; off+len(sec) <= len(b); {
			i := bytes.Index(b[off:], sec)
			if i < 0 {
				break
			}
			all = append(all, span{off + i, off + i + len(sec)})
			off += i + 1
		}
	}
	if len(all) < 2 {
		return all
	}
	slices.SortFunc(all, func(a, b span) int { return a.start - b.start })
	merged := all[:1]
	for _, s := range all[1:] {
		last := &merged[len(merged)-1]
		if s.start < last.end {
			last.end = max(last.end, s.end)
			continue
		}
		merged = append(merged, s)
	}
	return merged
}

// appendMasked writes b to out with each span replaced by Redaction.
func appendMasked(out io.Writer, b []byte, spans []span) {
	prev := 0
	for _, s := range spans {
		_, _ = out.Write(b[prev:s.start])
		_, _ = io.WriteString(out, Redaction)
		prev = s.end
	}
	_, _ = out.Write(b[prev:])
}

// errWriterClosed is returned by Write after Close.
var errWriterClosed = errors.New("vault: write to a closed mask writer")

// MaskWriter masks a stream on its way to another writer. A secret split
// across Write calls is still masked: the writer holds back the last bytes
// that could begin a secret until the next Write or Close. Its output equals
// Mask applied to the whole stream, except when a run of overlapping matches
// grows past 8 KiB, where it is flushed early.
//
// Close must be called at the end of the stream to write what is held back;
// it does not close the underlying writer. Safe for concurrent use, so one
// MaskWriter can take both Stdout and Stderr of a command.
type MaskWriter struct {
	m      *Masker
	w      io.Writer
	mu     sync.Mutex
	buf    []byte
	out    bytes.Buffer
	err    error // sticky error of the underlying writer
	closed bool
}

// Writer returns a MaskWriter that writes the masked stream to w.
func (m *Masker) Writer(w io.Writer) *MaskWriter {
	return &MaskWriter{m: m, w: w}
}

// Write masks p and passes on everything that can no longer be part of a
// secret. It reports len(p) unless the underlying writer failed.
func (mw *MaskWriter) Write(p []byte) (int, error) {
	mw.mu.Lock()
	defer mw.mu.Unlock()
	if mw.closed {
		return 0, errWriterClosed
	}
	if mw.err != nil {
		return 0, mw.err
	}
	if len(mw.m.secrets) == 0 {
		n, err := mw.w.Write(p)
		mw.err = err
		return n, err
	}
	mw.buf = append(mw.buf, p...)
	spans := mw.m.spans(mw.buf)

	// Every secret that starts before cut ends inside buf, so bytes before
	// cut are settled, unless a merged span straddles cut: then keep the
	// whole span, since a later match may still extend it.
	cut := len(mw.buf) - (mw.m.maxLen - 1)
	if cut <= 0 {
		return len(p), nil
	}
	done := 0
	for i, s := range spans {
		if s.end <= cut {
			done = i + 1
			continue
		}
		if s.start < cut {
			if len(mw.buf)-s.start > maxHold {
				cut, done = s.end, i+1 // degenerate run: flush it now
			} else {
				cut = s.start
			}
		}
		break
	}
	if err := mw.emit(mw.buf[:cut], spans[:done]); err != nil {
		return 0, err
	}
	mw.buf = append(mw.buf[:0], mw.buf[cut:]...)
	return len(p), nil
}

// Close writes the held-back tail, masked. Later writes fail.
func (mw *MaskWriter) Close() error {
	mw.mu.Lock()
	defer mw.mu.Unlock()
	if mw.closed {
		return mw.err
	}
	mw.closed = true
	if mw.err != nil {
		return mw.err
	}
	err := mw.emit(mw.buf, mw.m.spans(mw.buf))
	clear(mw.buf)
	mw.buf = nil
	return err
}

func (mw *MaskWriter) emit(b []byte, spans []span) error {
	if len(b) == 0 {
		return nil
	}
	mw.out.Reset()
	appendMasked(&mw.out, b, spans)
	_, err := mw.w.Write(mw.out.Bytes())
	mw.err = err
	return err
}
