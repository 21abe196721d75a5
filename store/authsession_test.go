package store

import (
	"context"
	"testing"
	"time"
)

func TestPurgeExpiredKeepsWhatStillMatters(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	now := time.Now().UTC()
	db.Now = func() time.Time { return now }
	u := &User{Email: "p@example.com", PasswordHash: "x"}
	err := db.Write(ctx, func(tx *Tx) error {
		if err := createUserTx(ctx, tx, u); err != nil {
			return err
		}
		for _, j := range []struct {
			id  string
			exp time.Time
		}{{"old", now.Add(-time.Minute)}, {"live", now.Add(time.Minute)}} {
			if err := revokeTokenTx(ctx, tx, j.id, j.exp); err != nil {
				return err
			}
		}
		for i, exp := range []time.Time{now.Add(-61 * 24 * time.Hour), now.Add(-time.Hour)} {
			s := &AuthSession{ID: NewID(), UserID: u.ID, Salt: []byte{1}, RefreshHash: []byte{byte(i)}, ExpiresAt: exp}
			if err := createAuthSessionTx(ctx, tx, s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateEmailToken(ctx, u.ID, TokenReset, []byte("h1"), -48*time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateEmailToken(ctx, u.ID, TokenVerify, []byte("h2"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := db.PurgeExpired(ctx); err != nil {
		t.Fatal(err)
	}
	left, err := db.RevokedTokens(ctx)
	if err != nil || len(left) != 1 || left["live"].IsZero() {
		t.Fatalf("revoked tokens after purge: %v %v", left, err)
	}
	count := func(q string) int {
		var n int
		if err := db.r.QueryRowContext(ctx, q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(`SELECT COUNT(*) FROM auth_sessions`); n != 1 {
		t.Fatalf("sessions after purge: %d, want 1 (the recently expired one stays for the list of past sessions)", n)
	}
	if n := count(`SELECT COUNT(*) FROM email_tokens`); n != 1 {
		t.Fatalf("email tokens after purge: %d, want 1", n)
	}
}
