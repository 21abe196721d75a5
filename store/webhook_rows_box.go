package store

// A flush's rows are []any: every string put there is boxed, which
// allocates (16 bytes and a malloc per value). Most columns of a group
// commit's rows repeat the previous row's value (the tenant, the task, the
// provider, the status, the batch's time), so rowBoxes keeps the interface
// value made for each such column's last string and hands it out again when
// the next row holds the same text. Rows that share a boxed value also
// compare equal at once in sharedArgs (same data pointer).
type rowBoxes struct {
	last [boxCols]struct {
		s string
		v any
	}
}

// The columns rowBoxes remembers, one slot each.
const (
	boxOrg = iota
	boxProject
	boxTask
	boxProvider
	boxType
	boxVerification
	boxStatus
	boxError
	boxHeaders
	boxSeverity
	boxNow
	boxCols
)

// str returns s boxed, reusing the slot's last box when it holds the same text.
func (b *rowBoxes) str(slot int, s string) any {
	l := &b.last[slot]
	if l.v != nil && l.s == s {
		return l.v
	}
	l.s, l.v = s, s
	return l.v
}

// nullStr is nullStr(s) through the slot.
func (b *rowBoxes) nullStr(slot int, s string) any {
	if s == "" {
		return nil
	}
	return b.str(slot, s)
}
