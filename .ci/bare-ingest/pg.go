package main

import (
	"context"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// openPostgres is the PostgreSQL floor: the same table and index, one
// connection, each batch one multi-row INSERT (a row per delivery) in its own
// transaction, committed with synchronous_commit on (the WAL flushed before
// the answer): one round trip per batch.
func openPostgres(url string) func(context.Context, []delivery) error {
	ctx := context.Background()
	conn, err := pgconn.Connect(ctx, url)
	if err != nil {
		fail(err)
	}
	if err := conn.Exec(ctx, `SET synchronous_commit = on;
		CREATE TABLE IF NOT EXISTS events (id bigserial PRIMARY KEY, path text NOT NULL, received_at timestamptz NOT NULL, body_hash text NOT NULL, body bytea);
		CREATE INDEX IF NOT EXISTS events_path ON events(path, received_at)`).Close(); err != nil {
		fail(err)
	}
	return func(ctx context.Context, batch []delivery) error { return commitPostgres(ctx, conn, batch) }
}

const (
	oidText  = 25
	oidBytea = 17
)

func commitPostgres(ctx context.Context, conn *pgconn.PgConn, batch []delivery) error {
	var sql strings.Builder
	sql.WriteString(`INSERT INTO events (path, received_at, body_hash, body) VALUES `)
	params := make([][]byte, 0, 3*len(batch))
	oids := make([]uint32, 0, 3*len(batch))
	formats := make([]int16, 0, 3*len(batch))
	for i, d := range batch {
		if i > 0 {
			sql.WriteByte(',')
		}
		n := 3 * i
		sql.WriteString("($" + strconv.Itoa(n+1) + ",now(),$" + strconv.Itoa(n+2) + ",$" + strconv.Itoa(n+3) + ")")
		params = append(params, []byte(d.path), []byte(d.hash), d.body)
		oids = append(oids, oidText, oidText, oidBytea)
		formats = append(formats, 0, 0, 1)
	}
	// One statement outside a transaction block is its own transaction: it
	// commits (and flushes the WAL) before the answer to its Sync.
	_, err := conn.ExecParams(ctx, sql.String(), params, oids, formats, nil).Close()
	return err
}
