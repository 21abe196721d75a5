package store

import (
	"context"
	"database/sql/driver"
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// A group commit's multi-row INSERTs (flushStmts) go to PostgreSQL as ONE
// statement per table and batch: the driver gathers the rows that
// consecutive queued flush statements of the same table carry (insertRows
// splits a batch of 21 rows into chunks of 16, 4 and 1) and sends them as
// INSERT INTO t (...) SELECT * FROM unnest($1::text[], $2::int8[], ...),
// one binary array per column. Each statement costs both sides about as
// much as its rows' values: a batch of 15 events (six statements per
// table) took 28 µs more PostgreSQL CPU and 25 µs more of the server's per
// event than one of 16 (one statement per table) in
// BenchmarkIngestPostgresBackend. The rows, their order, their values and
// types, ON CONFLICT DO NOTHING, the triggers and the foreign keys are the
// same: only the number of statements changes. A value the arrays cannot
// carry (a type other than text, bytea, bigint or double precision) sends
// its statement as it was, after the rows gathered before it.

// pgRunMaxRows bounds the rows gathered into one statement.
const pgRunMaxRows = 4096

// pgCoalesce is what a flush statement's coalescing needs.
type pgCoalesce struct {
	cols      int
	oids      []uint32 // the columns' types, from the VALUES statement's parameters
	unnestSQL string
	unnest    *pgconn.StatementDescription // prepared on the connection
}

// pgRun is the rows gathered for one unnest statement: per column a binary
// array whose 20-byte header is filled in when the run is closed.
type pgRun struct {
	c     *pgCoalesce // nil when no run is open
	cols  [][]byte
	nulls []bool
	rows  int
	mark  []int // gather's scratch
	// closeRun's scratch
	vals    [][]byte
	formats []int16
}

// pgFlushCols maps the PostgreSQL text of every flush statement to its
// number of columns.
var pgFlushCols = sync.OnceValue(func() map[string]int {
	m := map[string]int{}
	for _, byN := range flushStmts {
		for n, q := range byN {
			m[pgSQL(q)] = strings.Count(q, "?") / n
		}
	}
	return m
})

// pgArrayTypes are the element types a column's array may have, by the
// column's parameter type (the array's header names the same type).
var pgArrayTypes = map[uint32]string{25: "text", 1043: "varchar", 17: "bytea", 20: "int8", 701: "float8"}

// coalesceInfo returns how sd's rows are gathered, or nil when they are not
// (not a flush statement, or a column type the arrays do not carry).
func coalesceInfo(sd *pgconn.StatementDescription) *pgCoalesce {
	cols, ok := pgFlushCols()[sd.SQL]
	if !ok || cols == 0 || len(sd.ParamOIDs)%cols != 0 {
		return nil
	}
	q := sd.SQL
	i := strings.Index(q, " VALUES ")
	if i < 0 {
		return nil
	}
	suffix := ""
	if strings.HasSuffix(q, " ON CONFLICT DO NOTHING") {
		suffix = " ON CONFLICT DO NOTHING"
	} else if !strings.HasSuffix(q, ")") {
		return nil
	}
	var b strings.Builder
	b.WriteString(q[:i])
	b.WriteString(" SELECT * FROM unnest(")
	for c, oid := range sd.ParamOIDs[:cols] {
		t, ok := pgArrayTypes[oid]
		if !ok {
			return nil
		}
		if c > 0 {
			b.WriteString(", ")
		}
		b.WriteString("$" + strconv.Itoa(c+1) + "::" + t + "[]")
	}
	b.WriteString(")" + suffix)
	return &pgCoalesce{cols: cols, oids: append([]uint32(nil), sd.ParamOIDs[:cols]...), unnestSQL: b.String()}
}

// coalescer returns sd's coalescing on this connection (nil: none), its
// unnest statement prepared the first time.
func (dc *pgDriverConn) coalescer(ctx context.Context, sd *pgconn.StatementDescription) (*pgCoalesce, error) {
	c, seen := dc.coal[sd]
	if seen {
		return c, nil
	}
	if dc.coal == nil {
		dc.coal = map[*pgconn.StatementDescription]*pgCoalesce{}
	}
	if c = coalesceInfo(sd); c != nil {
		u, err := dc.prepared(ctx, c.unnestSQL)
		if err != nil {
			return nil, err
		}
		c.unnest = u
	}
	dc.coal[sd] = c
	return c, nil
}

// gather adds a flush statement's rows to the open run of its table (opening
// one after closing another table's); false when a value cannot go in an
// array: the caller then queues the statement itself, after the run.
func (dc *pgDriverConn) gather(c *pgCoalesce, args []driver.NamedValue) bool {
	p := dc.pend
	r := &p.run
	if r.c != nil && (r.c.unnest != c.unnest || r.rows >= pgRunMaxRows) {
		dc.closeRun()
	}
	opened := r.c == nil
	if opened {
		r.c, r.rows = c, 0
		for len(r.cols) < c.cols {
			r.cols = append(r.cols, nil)
		}
		r.nulls = append(r.nulls[:0], make([]bool, c.cols)...)
		for i := 0; i < c.cols; i++ {
			r.cols[i] = append(r.cols[i][:0], make([]byte, 20)...) // the header, filled in by closeRun
		}
	}
	mark := r.mark[:0]
	for i := 0; i < c.cols; i++ {
		mark = append(mark, len(r.cols[i]))
	}
	r.mark = mark
	for i, a := range args {
		v, col := a.Value, i%c.cols
		var ok bool
		r.cols[col], ok = appendElement(r.cols[col], c.oids[col], v)
		if !ok {
			for j := range mark {
				r.cols[j] = r.cols[j][:mark[j]]
			}
			if opened {
				r.c = nil
			} else {
				dc.closeRun()
			}
			return false
		}
		if isNull(v) {
			r.nulls[col] = true
		}
	}
	r.rows += len(args) / c.cols
	if opened {
		p.sql = append(p.sql, c.unnestSQL)
	}
	return true
}

// closeRun queues the open run's statement (its place in the queue is where
// the run began: nothing else is queued while a run is open).
func (dc *pgDriverConn) closeRun() {
	p := dc.pend
	if p == nil || p.run.c == nil {
		return
	}
	r := &p.run
	c := r.c
	r.c = nil
	// Its own scratch, not params': a query or statement behind the run
	// has its values in params' scratch when the run is closed.
	if cap(r.vals) < c.cols {
		r.vals, r.formats = make([][]byte, c.cols), make([]int16, c.cols)
	}
	vals, formats := r.vals[:c.cols], r.formats[:c.cols]
	for i := 0; i < c.cols; i++ {
		h := r.cols[i][:20]
		binary.BigEndian.PutUint32(h[0:], 1) // dimensions
		var hasNull uint32
		if r.nulls[i] {
			hasNull = 1
		}
		binary.BigEndian.PutUint32(h[4:], hasNull)
		binary.BigEndian.PutUint32(h[8:], c.oids[i])
		binary.BigEndian.PutUint32(h[12:], uint32(r.rows))
		binary.BigEndian.PutUint32(h[16:], 1) // lower bound
		vals[i], formats[i] = r.cols[i], 1
	}
	p.b.ExecStatement(c.unnest, vals, formats, nil) // copied into the batch now
}

// pgNull is a NULL element (length -1).
const pgNull = math.MaxUint32

// appendElement appends v as an element of a binary array of oid; false
// when it cannot. A nil []byte is NULL, as params sends it.
func appendElement(b []byte, oid uint32, v any) ([]byte, bool) {
	if v == nil {
		return binary.BigEndian.AppendUint32(b, pgNull), true
	}
	withLen := func(s []byte) []byte {
		b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
		return append(b, s...)
	}
	switch oid {
	case 25, 1043, 17: // text and bytea: the bytes (text's binary form is its UTF-8)
		switch x := v.(type) {
		case string:
			b = binary.BigEndian.AppendUint32(b, uint32(len(x)))
			return append(b, x...), true
		case []byte: // as params sends it: the raw bytes, in binary
			if x == nil {
				return binary.BigEndian.AppendUint32(b, pgNull), true
			}
			return withLen(x), true
		case int64:
			if oid == 17 {
				return b, false
			}
			return withLen(strconv.AppendInt(nil, x, 10)), true
		case time.Time:
			if oid == 17 {
				return b, false
			}
			return withLen(x.UTC().AppendFormat(nil, time.RFC3339Nano)), true
		}
	case 20:
		var n int64
		switch x := v.(type) {
		case int64:
			n = x
		case bool: // flags are 0/1 integers, as in params
			if x {
				n = 1
			}
		default:
			return b, false
		}
		b = binary.BigEndian.AppendUint32(b, 8)
		return binary.BigEndian.AppendUint64(b, uint64(n)), true
	case 701:
		if x, ok := v.(float64); ok {
			b = binary.BigEndian.AppendUint32(b, 8)
			return binary.BigEndian.AppendUint64(b, math.Float64bits(x)), true
		}
	}
	return b, false
}

// isNull says whether v goes as NULL (nil, or a nil []byte).
func isNull(v any) bool {
	if v == nil {
		return true
	}
	x, ok := v.([]byte)
	return ok && x == nil
}
