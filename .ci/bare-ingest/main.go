// Command bare-ingest is the floor of the ingest row of .ci/bench.sh: the
// least a durable webhook receiver on this stack can do per delivery. It
// reads the body, hashes it, and stores it with group commit in SQLite
// (modernc.org/sqlite, WAL, synchronous=FULL, answered after the commit),
// with one index besides the key. No authentication, parsing, dedupe,
// tenancy or dispatch: whatever opsagent reaches is measured against this.
// Given a PostgreSQL URL as third argument it stores in PostgreSQL instead
// (pg.go): the floor of .ci/bench-cluster.sh's PostgreSQL ingest row.
//
//	go build -o bare-ingest ./.ci/bare-ingest && ./bare-ingest 127.0.0.1:0 DIR   (prints the bound address)
//	./bare-ingest 127.0.0.1:0 DIR postgres://...   (PostgreSQL, synchronous_commit on)
package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/julienschmidt/httprouter"
	_ "modernc.org/sqlite"
)

type delivery struct {
	path, hash string
	body       []byte
	done       chan error
}

func main() {
	addr, dir := "127.0.0.1:0", os.TempDir()
	if len(os.Args) > 2 {
		addr, dir = os.Args[1], os.Args[2]
	}
	var store func(context.Context, []delivery) error
	if len(os.Args) > 3 {
		store = openPostgres(os.Args[3])
	} else {
		store = openSQLite(dir)
	}
	queue := make(chan delivery, 8192)
	go writer(store, queue)
	r := httprouter.New()
	r.POST("/api/webhooks/:id", func(w http.ResponseWriter, req *http.Request, _ httprouter.Params) {
		body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		sum := sha256.Sum256(body)
		d := delivery{path: req.URL.Path, hash: hex.EncodeToString(sum[:]), body: body, done: make(chan error, 1)}
		queue <- d
		if err := <-d.done; err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"status":"accepted"}`))
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fail(err)
	}
	fmt.Println(ln.Addr().String())
	_ = http.Serve(ln, r)
}

func openSQLite(dir string) func(context.Context, []delivery) error {
	dsn := "file:" + filepath.Join(dir, "bare-ingest.db") + "?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=busy_timeout(5000)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		fail(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY, path TEXT NOT NULL, received_at TEXT NOT NULL, body_hash TEXT NOT NULL, body BLOB);
		CREATE INDEX IF NOT EXISTS events_path ON events(path, received_at)`); err != nil {
		fail(err)
	}
	return func(ctx context.Context, batch []delivery) error { return commit(ctx, db, batch) }
}

// writer commits whatever is queued in one transaction, then answers it.
func writer(store func(context.Context, []delivery) error, queue chan delivery) {
	ctx := context.Background()
	for {
		batch := []delivery{<-queue}
	fill:
		for len(batch) < cap(queue) {
			select {
			case d := <-queue:
				batch = append(batch, d)
			default:
				break fill
			}
		}
		err := store(ctx, batch)
		for _, d := range batch {
			d.done <- err
		}
	}
}

func commit(ctx context.Context, db *sql.DB, batch []delivery) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, `INSERT INTO events (path, received_at, body_hash, body) VALUES (?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	now := time.Now().UTC().Format(time.RFC3339Nano)
	for _, d := range batch {
		if _, err := st.ExecContext(ctx, d.path, now, d.hash, d.body); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
