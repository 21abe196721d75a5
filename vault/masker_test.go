package vault

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestMask(t *testing.T) {
	for _, tc := range []struct {
		name    string
		secrets []string
		in      string
		want    string
	}{
		{"none", nil, "token abcd", "token abcd"},
		{"one", []string{"s3cr3t"}, "pw=s3cr3t;", "pw=********;"},
		{"repeated", []string{"s3cr3t"}, "s3cr3ts3cr3t x s3cr3t", "**************** x ********"},
		{"short ignored", []string{"abc", "yes"}, "abc yes", "abc yes"},
		{"nested", []string{"abcd", "xxabcdxx"}, "1xxabcdxx2abcd", "1********2********"},
		{"overlapping", []string{"abcdef", "defghi"}, "-abcdefghi-", "-********-"},
		{"self overlap", []string{"aaaa"}, "baaaaaab", "b********b"},
		{"duplicates", []string{"tok-1", "tok-1"}, "tok-1", "********"},
		{"binary", []string{"\x00\xff\x00\xff"}, "a\x00\xff\x00\xffb", "a********b"},
		{"multiline", []string{"line1\nline2"}, "x line1\nline2 y", "x ******** y"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NewMasker(tc.secrets...).Mask(tc.in); got != tc.want {
				t.Errorf("Mask(%q): got %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// streamMask writes text through a MaskWriter in the given chunk sizes.
func streamMask(t *testing.T, m *Masker, text string, chunks []int) string {
	t.Helper()
	var out bytes.Buffer
	w := m.Writer(&out)
	rest := text
	for _, n := range chunks {
		n = min(n, len(rest))
		if k, err := w.Write([]byte(rest[:n])); err != nil || k != n {
			t.Fatalf("write: got %d, %v; want %d", k, err, n)
		}
		rest = rest[n:]
	}
	if _, err := w.Write([]byte(rest)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestMaskWriterEverySplit(t *testing.T) {
	m := NewMasker("sk-ABCDEFGH", "ABCDEFGH-tail", "pass")
	text := "key sk-ABCDEFGH-tail and pass, passpass then sk-ABCDEFGH."
	want := m.Mask(text)
	if strings.Contains(want, "ABCD") || strings.Contains(want, "pass") {
		t.Fatalf("Mask left a secret: %q", want)
	}
	for i := 0; i <= len(text); i++ {
		for j := i; j <= len(text); j++ {
			if got := streamMask(t, m, text, []int{i, j - i}); got != want {
				t.Fatalf("split at %d,%d: got %q, want %q", i, j, got, want)
			}
		}
	}
	ones := make([]int, len(text))
	for i := range ones {
		ones[i] = 1
	}
	if got := streamMask(t, m, text, ones); got != want {
		t.Fatalf("byte by byte: got %q, want %q", got, want)
	}
}

// An independent oracle: every byte of every occurrence disappears, every
// other byte survives in order, and streaming in random chunks changes
// nothing. The small alphabet makes overlaps common.
func TestMaskRandomized(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = "abcx"[rng.IntN(4)]
		}
		return string(b)
	}
	for range 300 {
		secrets := []string{word(4 + rng.IntN(4)), word(4 + rng.IntN(8)), word(2)}
		text := word(rng.IntN(200))
		m := NewMasker(secrets...)
		got := m.Mask(text)

		covered := make([]bool, len(text))
		for _, s := range secrets[:2] {
			for i := 0; i+len(s) <= len(text); i++ {
				if text[i:i+len(s)] == s {
					for j := i; j < i+len(s); j++ {
						covered[j] = true
					}
				}
			}
		}
		var kept strings.Builder
		for i := range text {
			if !covered[i] {
				kept.WriteByte(text[i])
			}
		}
		if strings.ReplaceAll(got, Redaction, "") != kept.String() {
			t.Fatalf("text %q secrets %q: got %q, want the uncovered bytes %q", text, secrets, got, kept.String())
		}
		var chunks []int
		for range 10 {
			chunks = append(chunks, rng.IntN(20))
		}
		if s := streamMask(t, m, text, chunks); s != got {
			t.Fatalf("text %q secrets %q chunks %v: stream %q, want %q", text, secrets, chunks, s, got)
		}
	}
}

// A run of self-overlapping matches longer than maxHold is flushed early:
// the buffer stays bounded and no secret byte leaks.
func TestMaskWriterBoundedHold(t *testing.T) {
	m := NewMasker("aaaa")
	var out bytes.Buffer
	w := m.Writer(&out)
	chunk := bytes.Repeat([]byte("a"), 1000)
	for range 300 {
		if _, err := w.Write(chunk); err != nil {
			t.Fatal(err)
		}
		if len(w.buf) > maxHold+len(chunk) {
			t.Fatalf("held %d bytes, want at most %d", len(w.buf), maxHold+len(chunk))
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out.Bytes(), []byte("a")) {
		t.Errorf("output kept secret bytes: %q...", out.Bytes()[:64])
	}
}

type failingWriter struct{ calls int }

func (f *failingWriter) Write(p []byte) (int, error) {
	f.calls++
	return 0, errors.New("disk full")
}

func TestMaskWriterErrors(t *testing.T) {
	fw := &failingWriter{}
	w := NewMasker("secret").Writer(fw)
	if _, err := w.Write([]byte("hello world, long enough to flush")); err == nil {
		t.Fatal("write to a failing writer: got nil error")
	}
	if _, err := w.Write([]byte("more")); err == nil || fw.calls != 1 {
		t.Errorf("after a failure: got %v after %d calls, want the sticky error and no new call", err, fw.calls)
	}

	var out bytes.Buffer
	w = NewMasker("secret").Writer(&out)
	_, _ = w.Write([]byte("the secr"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if out.String() != "the secr" {
		t.Errorf("close: got %q, want the held-back tail", out.String())
	}
	if _, err := w.Write([]byte("x")); err == nil {
		t.Error("write after close: got nil error")
	}
}

func TestMaskWriterNoSecretsPassesThrough(t *testing.T) {
	var out bytes.Buffer
	w := NewMasker("ab").Writer(&out) // too short: no secrets at all
	if _, err := w.Write([]byte("ab cd")); err != nil {
		t.Fatal(err)
	}
	if out.String() != "ab cd" {
		t.Errorf("got %q before Close, want it written through", out.String())
	}
}
