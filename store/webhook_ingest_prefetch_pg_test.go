package store

import (
	"context"
	"fmt"
	"testing"
)

// The key and dedupe lookups' array parameters carry every key as it is:
// quotes, backslashes, braces, commas, spaces, an empty key, "NULL" and
// non-ASCII text are elements, not syntax.
func TestPGArrayLiteralsRoundTrip(t *testing.T) {
	db, _ := openTempPG(t)
	ctx := context.Background()
	keys := []string{`group:{}:{alertname="Disk"}`, `a\b`, `\"`, `{x,y}`, ` spaced `, ``, `NULL`, `é ü 日本`, `"`, `\`}
	rows, err := db.r.QueryContext(ctx, `SELECT k FROM unnest(?::text[]) WITH ORDINALITY AS u(k, i) ORDER BY i`, pgTextArray(keys))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var k *string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		if k == nil {
			t.Fatalf("a NULL element after %q", got)
		}
		got = append(got, *k)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", keys) {
		t.Fatalf("got %q, want %q", got, keys)
	}
	var sum int64
	ns := []int64{1, -2, 1<<60 - 1}
	if err := db.r.QueryRowContext(ctx, `SELECT sum(n)::bigint FROM unnest(?::bigint[]) n`, pgInt8Array(ns)).Scan(&sum); err != nil || sum != ns[0]+ns[1]+ns[2] {
		t.Fatalf("sum %d, %v", sum, err)
	}
}
