package store

import "database/sql"

// rowScanner is what the scanX helpers read from: a *sql.Row or *sql.Rows.
type rowScanner = interface{ Scan(...any) error }

// collectRows reads every remaining row with scan into a slice of values
// (never nil, so an empty list encodes as []).
func collectRows[T any](rows *sql.Rows, scan func(rowScanner) (*T, error)) ([]T, error) {
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *v)
	}
	return out, rows.Err()
}

// collectPtrs is collectRows for callers that keep pointers.
func collectPtrs[T any](rows *sql.Rows, scan func(rowScanner) (*T, error)) ([]*T, error) {
	out := []*T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
