package store

import (
	"testing"
	"time"
)

// A hold answers its reason until it expires, only for its org, and
// releasing it ends it at once.
func TestWebhookRunHoldExpiresAndReleases(t *testing.T) {
	db := &DB{}
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	db.HoldWebhookRuns("org-a", "no model", now.Add(RunHoldFor))
	if got := db.webhookRunHeld("org-a", now); got != "no model" {
		t.Fatalf("held org: %q", got)
	}
	if got := db.webhookRunHeld("org-b", now); got != "" {
		t.Fatalf("another org: %q", got)
	}
	if got := db.webhookRunHeld("org-a", now.Add(RunHoldFor)); got != "" {
		t.Fatalf("at expiry: %q", got)
	}
	if len(db.runHolds.m) != 0 {
		t.Fatal("an expired hold is kept")
	}
	db.HoldWebhookRuns("org-a", "no model", now.Add(RunHoldFor))
	db.ReleaseWebhookRuns("org-a")
	if got := db.webhookRunHeld("org-a", now); got != "" {
		t.Fatalf("after release: %q", got)
	}
}
