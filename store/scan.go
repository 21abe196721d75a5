package store

import (
	"context"
	"database/sql"
)

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

// queryStrings runs a query of one text column (ids, mostly) and returns its
// values, nil when there are none. The rows are closed when it returns, so a
// transaction may write next.
func queryStrings(ctx context.Context, q Querier, query string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// execOne runs a statement that must change a row (a delete or update by id
// within a tenant's scope); none changed is NotFound(what), like any other
// tenant's id.
func execOne(ctx context.Context, q Querier, what, query string, args ...any) error {
	res, err := q.ExecContext(ctx, query, args...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return NotFound(what)
	}
	return nil
}
