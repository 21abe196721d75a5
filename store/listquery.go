package store

import (
	"context"
	"database/sql"
	"strings"
	"time"
)

// listQuery builds the WHERE clause of a tenant-scoped list: every list
// starts from its org and project (tenant scope cannot be forgotten), and each
// optional filter adds one parameterised condition. Conditions are constant
// text chosen by the caller, values are always bound arguments, so the query
// text depends only on which filters are set (which keeps it cacheable as a
// prepared statement).
type listQuery struct {
	where []string
	args  []any
}

// scopedList starts a list of one project of one org.
func scopedList(orgID, projectID string) *listQuery {
	return &listQuery{where: []string{"org_id = ?", "project_id = ?"}, args: []any{orgID, projectID}}
}

// and adds a condition (constant text) with its arguments.
func (q *listQuery) and(cond string, args ...any) *listQuery {
	q.where = append(q.where, cond)
	q.args = append(q.args, args...)
	return q
}

// eq adds col = v when v is set.
func (q *listQuery) eq(col, v string) *listQuery {
	if v != "" {
		q.and(col+" = ?", v)
	}
	return q
}

// search adds a case-insensitive substring match of s against any of exprs
// (each already lower-cased by the caller where needed) when s is set.
func (q *listQuery) search(s string, exprs ...string) *listQuery {
	s = strings.TrimSpace(s)
	if s == "" {
		return q
	}
	like := "%" + likeEscape(strings.ToLower(s)) + "%"
	ors := make([]string, len(exprs))
	for i, e := range exprs {
		ors[i] = e + ` LIKE ? ESCAPE '\'`
		q.args = append(q.args, like)
	}
	q.where = append(q.where, "("+strings.Join(ors, " OR ")+")")
	return q
}

// since adds col >= after and col < before for the bounds that are set.
func (q *listQuery) since(col string, after, before *time.Time) *listQuery {
	if after != nil {
		q.and(col+" >= ?", TS(*after))
	}
	if before != nil {
		q.and(col+" < ?", TS(*before))
	}
	return q
}

// cmp adds col op v when v is set (op is a constant such as ">=").
func (q *listQuery) cmp(col, op string, v *float64) *listQuery {
	if v != nil {
		q.and(col+" "+op+" ?", *v)
	}
	return q
}

func (q *listQuery) cond() string { return strings.Join(q.where, " AND ") }

// listPage runs ONE query for a page and the total matching: the total is an
// uncorrelated scalar subquery, which SQLite evaluates once per statement and
// answers from an index where one covers the condition. (COUNT(*) OVER()
// would also be one query, but it materialises every matching row, all
// columns, before the LIMIT: a page of 50 of 100,000 sessions would read them
// all.) LIMIT and OFFSET are CASTs of their parameters: SQLite marks a
// statement whose LIMIT is a bare parameter for re-preparing whenever that
// parameter is bound again (it plans with the value), so a cached page
// statement was parsed and planned anew on every call, a seventh of the CPU
// of a page of tasks. orderArgs bind placeholders of order. A page past the end has no row
// to carry the total, so only then a second query counts.
func listPage[T any](ctx context.Context, db *DB, table, cols string, q *listQuery, order string, orderArgs []any,
	limit, offset int, scan func(rowScanner) (*T, error)) ([]T, int, error) {
	cond := q.cond()
	query := `SELECT ` + cols + `, (SELECT count(*) FROM ` + table + ` WHERE ` + cond + `) FROM ` + table +
		` WHERE ` + cond + ` ORDER BY ` + order + ` LIMIT CAST(? AS INTEGER) OFFSET CAST(? AS INTEGER)`
	args := make([]any, 0, 2*len(q.args)+len(orderArgs)+2)
	args = append(append(append(args, q.args...), q.args...), orderArgs...)
	args = append(args, limit, offset)
	rows, err := db.readRows(ctx, query, args...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out := []T{}
	total := 0
	ts := totalScanner{rows: rows, total: &total}
	for rows.Next() {
		v, err := scan(ts)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, *v)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	if len(out) == 0 && offset > 0 {
		if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM `+table+` WHERE `+cond, q.args...).Scan(&total); err != nil {
			return nil, 0, err
		}
	}
	return out, total, nil
}

// totalScanner hands a row's columns to a scanX helper and the trailing
// total column to total.
type totalScanner struct {
	rows  *sql.Rows
	total *int
}

func (t totalScanner) Scan(dest ...any) error { return t.rows.Scan(append(dest, t.total)...) }

// maxListStmts bounds the prepared list statements: their text depends on
// which filters are set, and a client walking every combination must not
// grow the cache without end. Past the bound a query is prepared per call.
const maxListStmts = 512

// readRows is readRow for multi-row reads: a prepared statement cached by
// its text, run detached from ctx's cancellation (a page is bounded by its
// LIMIT and the tenant's rows; see readRow for what cancellation costs).
func (db *DB) readRows(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ctx = context.WithoutCancel(ctx)
	if st, ok := db.stmts.Load(query); ok {
		return st.(*sql.Stmt).QueryContext(ctx, args...)
	}
	if db.nstmts.Load() >= maxListStmts {
		return db.r.QueryContext(ctx, query, args...)
	}
	st, err := db.r.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if prev, loaded := db.stmts.LoadOrStore(query, st); loaded {
		st.Close()
		st = prev.(*sql.Stmt)
	} else {
		db.nstmts.Add(1)
	}
	return st.QueryContext(ctx, args...)
}
