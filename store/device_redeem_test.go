package store

import (
	"context"
	"testing"
	"time"
)

func TestRedeemDeviceGrant(t *testing.T) {
	t.Parallel()
	db, _ := openTemp(t)
	ctx := context.Background()
	now := time.Now().UTC()
	db.Now = func() time.Time { return now }
	u := &User{Email: "cli@example.com", PasswordHash: "x"}
	org, err := db.CreateAccount(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	grant := func(code string) {
		t.Helper()
		g := &DeviceGrant{DeviceCodeHash: []byte(code), UserCode: code, ClientName: "cli", Interval: 5, ExpiresAt: now.Add(10 * time.Minute)}
		if err := db.CreateDeviceGrant(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	poll := func(code string) *DevicePoll {
		t.Helper()
		p, err := db.RedeemDeviceGrant(ctx, []byte(code), newLogin("cli"))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	grant("PEND-1")
	grant("DENY-1")
	grant("OKAY-1")
	if err := db.DecideDeviceGrant(ctx, "DENY-1", false, u.ID, org.ID); err != nil {
		t.Fatal(err)
	}
	if err := db.DecideDeviceGrant(ctx, "OKAY-1", true, u.ID, org.ID); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		code, want string
		wait       time.Duration
	}{
		{"NONE-1", PollUnknown, 0},
		{"PEND-1", PollPending, 0},
		{"PEND-1", PollSlowDown, time.Second},    // sooner than 3/4 of 5 s
		{"PEND-1", PollPending, 8 * time.Second}, // the interval is 10 s now
		{"DENY-1", PollDenied, 0},
		{"OKAY-1", PollIssued, 0},
		{"OKAY-1", PollConsumed, 0},
		{"PEND-1", PollExpired, 10 * time.Minute},
	}
	for i, s := range steps {
		now = now.Add(s.wait)
		p := poll(s.code)
		if p.Outcome != s.want {
			t.Fatalf("step %d (%s): %s, want %s", i, s.code, p.Outcome, s.want)
		}
		if s.want == PollIssued && (p.UserID != u.ID || p.OrgID != org.ID || !p.Now.Equal(now)) {
			t.Fatalf("issued %+v", p)
		}
	}
	if live, _ := db.FindActiveAuthSessions(ctx, u.ID); len(live) != 1 || live[0].Kind != "cli" {
		t.Fatalf("live sessions %v, want the one cli login", live)
	}
}
