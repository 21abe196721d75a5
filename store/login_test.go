package store

import (
	"context"
	"testing"
	"time"
)

// newLogin is a login session as the server prepares it.
func newLogin(kind string) *NewLogin {
	return &NewLogin{ID: NewID(), Salt: []byte("0123456789abcdef"), RefreshHash: []byte("hash-" + kind), UserAgent: "test",
		IP: "127.0.0.1", Kind: kind, TTL: time.Hour}
}

func TestRegisterIsAllOrNothing(t *testing.T) {
	t.Parallel()
	db, _ := openTemp(t)
	ctx := context.Background()
	u := &User{Email: " Ada@Example.com ", Name: "Ada", PasswordHash: "x"}
	l := newLogin("web")
	now, err := db.Register(ctx, u, l)
	if err != nil {
		t.Fatal(err)
	}
	if u.ID == "" || l.UserID != u.ID || u.CurrentOrgID == "" || now.IsZero() {
		t.Fatalf("register filled user %+v, login user %q, now %v", u, l.UserID, now)
	}
	if role, err := db.FindRole(ctx, u.CurrentOrgID, u.ID); err != nil || role != RoleOwner {
		t.Fatalf("role in the personal org: %q %v", role, err)
	}
	got, err := db.FindAuthSessionByID(ctx, l.ID)
	if err != nil || got.UserID != u.ID || !got.ExpiresAt.Equal(ParseTS(TS(now.Add(time.Hour)))) {
		t.Fatalf("session %+v %v", got, err)
	}
	stored, _ := db.FindUserByID(ctx, u.ID)
	if stored.Email != "ada@example.com" || stored.CurrentOrgID != u.CurrentOrgID || stored.LastLoginAt == nil {
		t.Fatalf("stored user %+v", stored)
	}

	// The same address again: nothing of the second attempt stays.
	l2 := newLogin("web")
	if _, err := db.Register(ctx, &User{Email: "ada@example.com", PasswordHash: "y"}, l2); ErrorCode(err) != EConflict {
		t.Fatalf("second register: %v, want conflict", err)
	}
	if _, err := db.FindAuthSessionByID(ctx, l2.ID); !IsNotFound(err) {
		t.Fatalf("the failed register left a session: %v", err)
	}
}

func TestLoginLogoutAndSwitchOrg(t *testing.T) {
	t.Parallel()
	db, _ := openTemp(t)
	ctx := context.Background()
	u := &User{Email: "bo@example.com", PasswordHash: "x"}
	personal, err := db.CreateAccount(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	cli := newLogin("cli")
	cli.UserID = u.ID
	if _, err := db.StartLogin(ctx, cli); err != nil {
		t.Fatal(err)
	}
	web := newLogin("web")
	web.UserID = u.ID
	if _, err := db.StartLogin(ctx, web); err != nil {
		t.Fatal(err)
	}
	if live, _ := db.FindActiveAuthSessions(ctx, u.ID); len(live) != 2 {
		t.Fatalf("%d live sessions, want 2", len(live))
	}

	// Switching moves the current org and blocklists the old token.
	other := &Organization{Name: "Team"}
	if err := db.CreateOrg(ctx, other, u.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SwitchOrg(ctx, u.ID, other.ID, "jti-1", time.Hour); err != nil {
		t.Fatal(err)
	}
	if cur, _ := db.FindUserByID(ctx, u.ID); cur.CurrentOrgID != other.ID || personal.ID == other.ID {
		t.Fatalf("current org %q, want %q", cur.CurrentOrgID, other.ID)
	}

	// Logout ends one session and blocklists its token; logout-all the rest.
	if err := db.EndLogin(ctx, web.ID, "jti-2", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if live, _ := db.FindActiveAuthSessions(ctx, u.ID); len(live) != 1 || live[0].ID != cli.ID {
		t.Fatalf("after logout: %d live sessions", len(live))
	}
	if err := db.EndAllLogins(ctx, u.ID, "jti-3", time.Hour); err != nil {
		t.Fatal(err)
	}
	if live, _ := db.FindActiveAuthSessions(ctx, u.ID); len(live) != 0 {
		t.Fatalf("after logout-all: %d live sessions", len(live))
	}
	if err := db.RevokeToken(ctx, "jti-4", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	revoked, err := db.RevokedTokens(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, jti := range []string{"jti-1", "jti-2", "jti-3", "jti-4"} {
		if _, ok := revoked[jti]; !ok {
			t.Errorf("%s not blocklisted", jti)
		}
	}
}
