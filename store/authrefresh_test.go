package store

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync"
	"testing"
	"time"
)

func refreshFixture(t *testing.T, n int) (*DB, []*AuthSession) {
	t.Helper()
	db, _ := openTemp(t)
	ctx := context.Background()
	var out []*AuthSession
	err := db.Write(ctx, func(tx *Tx) error {
		u := &User{Email: "refresh@example.com", Name: "r"}
		if err := createUserTx(ctx, tx, u); err != nil {
			return err
		}
		if _, err := createPersonalOrgTx(ctx, tx, u); err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			s := &AuthSession{ID: NewID(), UserID: u.ID, Salt: []byte{byte(i)}, ExpiresAt: tx.Now.Add(time.Hour)}
			s.RefreshHash = testHash(testToken(s, 0))
			if err := createAuthSessionTx(ctx, tx, s); err != nil {
				return err
			}
			out = append(out, s)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return db, out
}

func testToken(s *AuthSession, gen int) string { return fmt.Sprintf("%s.%x.%d", s.ID, s.Salt, gen) }
func testHash(tok string) []byte               { h := sha256.Sum256([]byte(tok)); return h[:] }

func attempt(s *AuthSession, tok string) RefreshAttempt {
	return RefreshAttempt{SessionID: s.ID, Presented: testHash(tok), Grace: 30 * time.Second, Token: testToken, Hash: testHash,
		Older: func(cur *AuthSession) bool {
			for g := 0; g < cur.Generation; g++ {
				if testToken(cur, g) == tok {
					return true
				}
			}
			return false
		}}
}

// Concurrent refreshes of many sessions all rotate, each exactly once;
// two tabs presenting the same token at once get the same new token; a
// token two generations old revokes the session.
func TestRefreshGroupCommit(t *testing.T) {
	db, sessions := refreshFixture(t, 40)
	ctx := context.Background()
	var wg sync.WaitGroup
	res := make([]RefreshResult, len(sessions)+1)
	errs := make([]error, len(sessions)+1)
	for i, s := range sessions {
		wg.Add(1)
		go func() { defer wg.Done(); res[i], errs[i] = db.RefreshAuthSession(ctx, attempt(s, testToken(s, 0))) }()
	}
	// A second tab of session 0 with the same token.
	wg.Add(1)
	go func() {
		defer wg.Done()
		res[len(sessions)], errs[len(sessions)] = db.RefreshAuthSession(ctx, attempt(sessions[0], testToken(sessions[0], 0)))
	}()
	wg.Wait()
	for i, s := range sessions {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		got, err := db.FindAuthSessionByID(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Generation != 1 || string(got.RefreshHash) != string(testHash(testToken(s, 1))) {
			t.Fatalf("session %d: generation %d after one rotation", i, got.Generation)
		}
		if i > 0 && (res[i].Outcome != RefreshRotated || res[i].Refresh != testToken(s, 1) || res[i].OrgID == "") {
			t.Fatalf("session %d: %+v", i, res[i])
		}
	}
	a, b := res[0], res[len(sessions)]
	if errs[len(sessions)] != nil || a.Refresh != b.Refresh || a.Refresh != testToken(sessions[0], 1) ||
		(a.Outcome == b.Outcome) || (a.Outcome != RefreshGrace && a.Outcome != RefreshRotated) {
		t.Fatalf("two tabs: %+v and %+v", a, b)
	}
	// Rotate session 1 again, then present its generation-0 token: reuse.
	s := sessions[1]
	if r, err := db.RefreshAuthSession(ctx, attempt(s, testToken(s, 1))); err != nil || r.Outcome != RefreshRotated {
		t.Fatalf("second rotation: %+v %v", r, err)
	}
	if r, err := db.RefreshAuthSession(ctx, attempt(s, testToken(s, 0))); err != nil || r.Outcome != RefreshReused {
		t.Fatalf("reuse: %+v %v", r, err)
	}
	if r, _ := db.RefreshAuthSession(ctx, attempt(s, testToken(s, 2))); r.Outcome != RefreshEnded {
		t.Fatalf("after reuse the session has ended, got %+v", r)
	}
	if r, _ := db.RefreshAuthSession(ctx, attempt(&AuthSession{ID: NewID()}, "nope")); r.Outcome != RefreshInvalid {
		t.Fatalf("unknown session: %+v", r)
	}
}

// A panic inside a batch fails that batch and leaves the group commit
// usable: the next request leads and commits.
func TestGroupCommitSurvivesAPanic(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	g := &groupCommit[int, int]{max: 8, run: func(ctx context.Context, tx *Tx, reqs []int, res []int) error {
		for i, r := range reqs {
			if r < 0 {
				panic("negative")
			}
			res[i] = r * 2
		}
		return nil
	}}
	if _, err := g.do(ctx, db, -1); err == nil {
		t.Fatal("a panicking batch reported no error")
	}
	if v, err := g.do(ctx, db, 21); err != nil || v != 42 {
		t.Fatalf("after the panic: %d %v", v, err)
	}
}
