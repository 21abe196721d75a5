package store

import "github.com/jackc/pgx/v5/pgconn"

// A connection keeps its last transaction's pipelined queue (pgPending) and
// reuses our own parts of it for the next one: the statements' texts and
// the coalesced flush rows' column buffers (pgdriver_coalesce.go), which
// are tens of KB in an ingest group commit. pgx's Batch has no public way
// to reset it, so each transaction starts a fresh one; writing its
// unexported fields was measured at ~5 µs per event in the server and was
// not worth tying the driver to pgx's private layout.

// pgSpareMax bounds the column buffers a connection keeps between
// transactions: a rare huge transaction's are left to the collector.
const pgSpareMax = 1 << 20

// newPending is an empty queue, the connection's spare one if it has it.
func (dc *pgDriverConn) newPending() *pgPending {
	if p := dc.spare; p != nil {
		dc.spare = nil
		return p
	}
	return &pgPending{}
}

// recycle keeps p as the connection's spare queue once its messages have
// been written. resultsRead says the server's answers to them have been read
// to the end: until then the reader of a pipelined query still reads p's
// Batch (its statement descriptions), so p is not kept.
func (dc *pgDriverConn) recycle(p *pgPending, resultsRead bool) {
	if p == nil || !resultsRead || p.run.capacity() > pgSpareMax {
		return
	}
	p.b = pgconn.Batch{}
	clear(p.sql)
	p.sql, p.begin, p.run.c = p.sql[:0], false, nil
	dc.spare = p
}

// capacity is the bytes r's column buffers hold.
func (r *pgRun) capacity() int {
	n := 0
	for _, c := range r.cols {
		n += cap(c)
	}
	return n
}
