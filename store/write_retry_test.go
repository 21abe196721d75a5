package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// A transaction that loses a serialization race or a deadlock is run again
// inside Write, and counted; one that loses every attempt returns an error
// the API answers 503 for (Contended), counted as given up.
func TestWriteRetriesLostRaces(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	runs := 0
	err = db.Write(ctx, func(tx *Tx) error {
		runs++
		switch runs {
		case 1, 2:
			return &pgconn.PgError{Code: "40001", Message: "could not serialize access"}
		case 3:
			return &pgconn.PgError{Code: "40P01", Message: "deadlock detected"}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO ops_heartbeat (id, beat_at) VALUES (1, ?)
			ON CONFLICT(id) DO UPDATE SET beat_at = excluded.beat_at`, TS(tx.Now))
		return err
	})
	if err != nil || runs != 4 {
		t.Fatalf("got err %v after %d runs, want success on the 4th", err, runs)
	}
	st := db.RetryStats()
	if st.Serialization != 2 || st.Deadlock != 1 || st.GaveUp != 0 {
		t.Fatalf("got %+v, want 2 serialization and 1 deadlock retries, none given up", st)
	}

	runs = 0
	err = db.Write(ctx, func(tx *Tx) error {
		runs++
		return &pgconn.PgError{Code: "40001"}
	})
	if !Contended(err) || runs != retryAttempts {
		t.Fatalf("got %v after %d runs, want a contended error after %d", err, runs, retryAttempts)
	}
	if st := db.RetryStats(); st.GaveUp != 1 {
		t.Fatalf("given up: got %d, want 1", st.GaveUp)
	}
	// Any other error ends the transaction at once.
	runs = 0
	boom := errors.New("boom")
	if err := db.Write(ctx, func(tx *Tx) error { runs++; return boom }); !errors.Is(err, boom) || runs != 1 || Contended(err) {
		t.Fatalf("got %v after %d runs, want boom after 1", err, runs)
	}
}

// Each pause is drawn at random below a cap that doubles up to retryMax.
func TestRetryWaitIsBoundedAndJittered(t *testing.T) {
	seen := map[int64]bool{}
	for n := 0; n < 50; n++ {
		w := retryWait(n % retryAttempts)
		if w < 0 || w > retryMax {
			t.Fatalf("wait %v out of [0, %v]", w, retryMax)
		}
		seen[int64(w)] = true
	}
	if len(seen) < 10 {
		t.Fatalf("%d distinct waits of 50: not jittered", len(seen))
	}
}
