package connector

import (
	"bytes"
	"context"
	"testing"
	"unicode/utf8"
)

// Output frames cut only on character boundaries and carry every byte: a
// stream of multi-byte text and stray non-UTF-8 bytes, cut at every split
// CompleteUTF8 allows, reaches the caller's writer through the hub exactly
// as it was, with every text frame valid UTF-8.
func TestOutputFramesCarryEveryByte(t *testing.T) {
	stream := []byte("ä€𝄞 plain \xff\xfe then ß€cret\xc3")
	h, url := testHub(t, Options{})
	for size := 1; size <= 8; size++ {
		c := dialRaw(t, url, "c1")
		var out syncBuf
		done := make(chan error, 1)
		go func() {
			_, err := h.Call(context.Background(), "c1", Run{Command: "cat", TimeoutMS: 5000, MaxOutput: 1 << 20}, &out)
			done <- err
		}()
		run := c.recv()
		// Cut as the connector does: size bytes a read, an incomplete
		// character held for the next frame, all of it at the end.
		var held []byte
		for off := 0; off < len(stream); off += size {
			chunk := append(held, stream[off:min(off+size, len(stream))]...)
			if off+size < len(stream) {
				cut := CompleteUTF8(chunk)
				chunk, held = chunk[:cut], append([]byte(nil), chunk[cut:]...)
			} else {
				held = nil
			}
			if len(chunk) == 0 {
				continue
			}
			f := OutputFrame(run.CallID, chunk)
			if utf8.Valid(chunk) != (f.Raw == nil) || (f.Raw == nil && f.Data != string(chunk)) || (f.Raw != nil && f.Data != "") {
				t.Fatalf("size %d: chunk %q framed as data %q raw %q", size, chunk, f.Data, f.Raw)
			}
			c.send(f)
		}
		c.send(&Frame{Type: TypeResult, CallID: run.CallID, Result: &Result{}})
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got := []byte(out.String()); !bytes.Equal(got, stream) {
			t.Fatalf("size %d: got %q, want %q", size, got, stream)
		}
	}
}

func TestCompleteUTF8HoldsOnlyAnIncompleteCharacter(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"", 0}, {"abc", 3}, {"a\xc3", 1}, {"a\xc3\xa4", 3}, {"\xe2\x82", 0}, {"\xf0\x9d\x84", 0}, {"\xf0\x9d\x84\x9e", 4},
		{"a\xff", 2}, {"a\x80\x80\x80", 4}, {"a\xe2\x82\xac\xe2", 4},
	} {
		if got := CompleteUTF8([]byte(tc.in)); got != tc.want {
			t.Errorf("CompleteUTF8(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}
