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
// been written. That is also before the answers are read (a pipelined
// query's rows): the reader holds its own copies of the Batch's slices and
// p gets a fresh Batch, and what p keeps, the statements' texts and the run's
// column buffers, was copied into the Batch's messages when it was queued.
// A group commit's reads end that way, and its flush then gathers into the
// same column buffers as the last transaction's.
func (dc *pgDriverConn) recycle(p *pgPending) {
	if p == nil || p.run.capacity() > pgSpareMax {
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
