package store

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// NewID makes what uuid.NewV7().String() made: a canonical version 7 RFC
// 4122 uuid carrying the current Unix millisecond, strictly increasing
// within the process (the timeline's order of entries written at one time
// breaks ties by id), with random bits that differ.
func TestNewIDIsIncreasingUUIDv7(t *testing.T) {
	before := time.Now().UnixMilli()
	const n = 5000 // several refills of the random bytes
	ids := make([]string, n)
	for i := range ids {
		ids[i] = NewID()
	}
	after := time.Now().UnixMilli()
	seen := map[string]bool{}
	tails := map[string]bool{}
	for i, id := range ids {
		u, err := uuid.Parse(id)
		if err != nil || u.String() != id {
			t.Fatalf("id %q is not a canonical uuid: %v", id, err)
		}
		if u.Version() != 7 || u.Variant() != uuid.RFC4122 {
			t.Fatalf("id %q: version %d variant %v", id, u.Version(), u.Variant())
		}
		milli := int64(u[0])<<40 | int64(u[1])<<32 | int64(u[2])<<24 | int64(u[3])<<16 | int64(u[4])<<8 | int64(u[5])
		// The sequence can carry an id past its millisecond only when more
		// than 4096 ids are made in one: allow that much.
		if milli < before || milli > after+2 {
			t.Fatalf("id %q: millisecond %d outside [%d, %d]", id, milli, before, after)
		}
		if i > 0 && id <= ids[i-1] {
			t.Fatalf("ids not increasing: %q then %q", ids[i-1], id)
		}
		if seen[id] {
			t.Fatalf("id %q twice", id)
		}
		seen[id] = true
		tails[id[19:]] = true
	}
	if len(tails) < n-1 {
		t.Fatalf("random parts repeat: %d distinct of %d", len(tails), n)
	}
}

// The library reads NewID's ids back to the same text, with the version
// and variant digits where it puts them.
func TestNewIDLayoutMatchesLibrary(t *testing.T) {
	for range 100 {
		id := NewID()
		u := uuid.MustParse(id)
		if got := u.String(); got != id {
			t.Fatalf("library formats %q as %q", id, got)
		}
		if id[14] != '7' || (id[19] != '8' && id[19] != '9' && id[19] != 'a' && id[19] != 'b') {
			t.Fatalf("id %q: version or variant digit wrong", id)
		}
	}
}

// parseUUID answers as uuid.Parse for canonical ids, other spellings and
// malformed input.
func TestParseUUIDAsLibrary(t *testing.T) {
	inputs := []string{NewID(), strings.ToUpper(NewID()), "00000000-0000-0000-0000-000000000000",
		"urn:uuid:" + NewID(), "{" + NewID() + "}", strings.ReplaceAll(NewID(), "-", ""), "", "x",
		NewID()[:35] + "g", "g" + NewID()[1:], NewID()[:8] + "x" + NewID()[9:], NewID()[:20] + "-" + NewID()[21:],
		strings.Repeat("f", 36), "01234567-89ab-cdef-ABCD-EF0123456789"}
	for _, s := range inputs {
		got, gotErr := parseUUID(s)
		want, wantErr := uuid.Parse(s)
		if got != want || (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("parseUUID(%q) = %v, %v; uuid.Parse: %v, %v", s, got, gotErr, want, wantErr)
		}
	}
}
