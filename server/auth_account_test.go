package server_test

import (
	"testing"

	"github.com/opsagent/opsagent/store"
)

func TestAccountDeletionAndErasure(t *testing.T) {
	t.Parallel()
	env := newEnv(t, openSignup)
	ada := env.register("ada@example.com")
	bob := env.register("bob@example.com")
	adaMe := ada.must(200, "GET", "/api/auth/me", nil).JSON()
	adaID, adaOrg := adaMe["id"].(string), adaMe["current_org_id"].(string)
	bobID := bob.userID()

	// Bob joins Ada's organization (member routes come with tenancy; the store does it here).
	err := env.DB.AddMember(t.Context(), adaOrg, bobID, "member")
	if err != nil {
		t.Fatal(err)
	}
	r := ada.do("DELETE", "/api/auth/me/account", nil)
	if r.Status != 400 || r.JSON()["code"] != "sole_owner" {
		t.Fatalf("sole owner with members: got %d %s, want 400 sole_owner", r.Status, r.Body)
	}
	ada.must(200, "GET", "/api/auth/me", nil) // nothing happened

	// Bob is no owner anywhere but his own solo org: he may leave.
	r = bob.must(202, "DELETE", "/api/auth/me/account", nil)
	if body := r.JSON(); body["status"] != "pending" || !store.ValidID(body["request_id"].(string)) {
		t.Fatalf("deletion answer: got %s", r.Body)
	}
	want401(t, "token after deletion", bob.do("GET", "/api/auth/me", nil))
	want401(t, "refresh after deletion", bob.do("POST", "/api/auth/refresh", nil))
	want401(t, "login after deletion", env.newClient().do("POST", "/api/auth/login", map[string]any{"email": "bob@example.com", "password": pw}))

	if err := env.Srv.RunErasures(t.Context()); err != nil {
		t.Fatal(err)
	}
	var n int
	for q, want := range map[string]int{
		`SELECT COUNT(*) FROM users WHERE id = ?`:                                              0,
		`SELECT COUNT(*) FROM org_members WHERE user_id = ?`:                                   0,
		`SELECT COUNT(*) FROM auth_sessions WHERE user_id = ?`:                                 0,
		`SELECT COUNT(*) FROM erasure_requests WHERE user_id = ? AND completed_at IS NOT NULL`: 1,
	} {
		if err := env.DB.Reader().QueryRow(q, bobID).Scan(&n); err != nil || n != want {
			t.Fatalf("%s: got %d (err %v), want %d", q, n, err, want)
		}
	}
	// Bob's personal org went with him; Ada's org stays, now without him.
	if err := env.DB.Reader().QueryRow(`SELECT COUNT(*) FROM organizations`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("organizations after erasure: got %d, want 1 (Ada's)", n)
	}
	want401(t, "login after erasure", env.newClient().do("POST", "/api/auth/login", map[string]any{"email": "bob@example.com", "password": pw}))
	// Running the worker again is harmless.
	if err := env.Srv.RunErasures(t.Context()); err != nil {
		t.Fatal(err)
	}

	// Now Ada is alone again, so she may delete her account.
	ada.must(202, "DELETE", "/api/auth/me/account", nil)
	if err := env.Srv.RunErasures(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := env.DB.Reader().QueryRow(`SELECT COUNT(*) FROM users WHERE id = ?`, adaID).Scan(&n); err != nil || n != 0 {
		t.Fatalf("Ada after erasure: %d rows", n)
	}
	// The address is free again.
	env.register("bob@example.com")
}
