package store

import (
	"reflect"
	"unsafe"

	"github.com/jackc/pgx/v5/pgconn"
)

// A connection keeps its last transaction's pipelined queue (pgPending) and
// reuses its buffers for the next one. pgconn.Batch grows its message
// buffer by appending from empty: an ingest group commit's statements (the
// events' bodies, headers and alerts, the incident rows) are tens of KB of
// Bind messages, so every transaction allocated, zeroed and copied its way
// through a doubling buffer: Bind.Encode's growslice and the clearing of the
// new arrays were ~3.5 % of the server's CPU in the PostgreSQL ingest bench.
//
// pgconn.Batch has no way to reset it, so the reset writes its unexported
// fields through a copy of their layout, and only when the layout of the
// linked pgx version is exactly that (checked once, by reflection): on any
// other layout every transaction simply starts a fresh Batch, as before.

// pgBatchFields is pgconn.Batch's layout in pgx v5.12.0.
type pgBatchFields struct {
	buf                   []byte
	statementDescriptions []*pgconn.StatementDescription
	resultFormats         [][]int16
	err                   error
}

// pgBatchReusable says pgconn.Batch has pgBatchFields' layout.
var pgBatchReusable = sameLayout(reflect.TypeOf(pgconn.Batch{}), reflect.TypeOf(pgBatchFields{}))

func sameLayout(a, b reflect.Type) bool {
	if a.Size() != b.Size() || a.NumField() != b.NumField() {
		return false
	}
	for i := 0; i < a.NumField(); i++ {
		fa, fb := a.Field(i), b.Field(i)
		if fa.Name != fb.Name || fa.Type != fb.Type || fa.Offset != fb.Offset {
			return false
		}
	}
	return true
}

// pgSpareMax bounds the buffer a connection keeps between transactions: a
// rare huge transaction's buffer is left to the collector.
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
// to the end: until then the reader of a pipelined query still indexes the
// batch's statement descriptions, so only the message buffer is kept.
func (dc *pgDriverConn) recycle(p *pgPending, resultsRead bool) {
	if p == nil || !pgBatchReusable {
		return
	}
	f := (*pgBatchFields)(unsafe.Pointer(&p.b))
	if cap(f.buf) > pgSpareMax {
		return
	}
	if resultsRead {
		clear(f.statementDescriptions)
		clear(f.resultFormats)
		f.statementDescriptions, f.resultFormats = f.statementDescriptions[:0], f.resultFormats[:0]
	} else {
		f.statementDescriptions, f.resultFormats = nil, nil
	}
	f.buf, f.err = f.buf[:0], nil
	clear(p.sql)
	p.sql, p.begin, p.run.c = p.sql[:0], false, nil
	dc.spare = p
}
