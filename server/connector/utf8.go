package connector

import "unicode/utf8"

// CompleteUTF8 is how much of b ends on a character boundary: all of it but
// an incomplete multi-byte sequence at its end (at most 3 bytes), which
// waits for the bytes that complete it. Output is cut into frames and
// events only there: JSON turns each half of a split character into
// U+FFFD, and a secret whose bytes changed is no longer masked. Bytes that
// can never become UTF-8 are not held.
func CompleteUTF8(b []byte) int {
	for i := len(b) - 1; i >= 0 && i > len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return len(b)
			}
			return i
		}
	}
	return len(b)
}

// OutputFrame carries one piece of a call's output: as text when it is
// valid UTF-8, else byte for byte in Raw (base64 in JSON), since JSON would
// replace every invalid byte.
func OutputFrame(callID string, b []byte) *Frame {
	if utf8.Valid(b) {
		return &Frame{Type: TypeOutput, CallID: callID, Data: string(b)}
	}
	return &Frame{Type: TypeOutput, CallID: callID, Raw: append([]byte(nil), b...)}
}

// Output is an output frame's bytes: its text, then its raw bytes.
func (f *Frame) Output() []byte {
	if len(f.Raw) == 0 {
		return []byte(f.Data)
	}
	return append([]byte(f.Data), f.Raw...)
}
