package heartbeat

import (
	"testing"
	"time"

	"github.com/opsagent/opsagent/store"
)

func TestNextDueCronInZone(t *testing.T) {
	c := &store.HeartbeatCheck{Schedule: "30 2 * * *", Timezone: "Europe/Berlin"}
	after := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	got := NextDue(c, after)
	want := time.Date(2026, 11, 26, 1, 30, 0, 0, time.UTC) // 02:30 CET
	if !got.Equal(want) {
		t.Fatalf("got %s, want %s", got, want)
	}
	p := &store.HeartbeatCheck{Period: time.Hour}
	if got := NextDue(p, after); !got.Equal(after.Add(time.Hour)) {
		t.Fatalf("period: got %s", got)
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		cron, tz      string
		period, grace time.Duration
		field         string
	}{
		{"", "", 0, time.Minute, "schedule"},
		{"* * * * *", "UTC", time.Hour, time.Minute, "schedule"},
		{"not cron", "UTC", 0, time.Minute, "schedule"},
		{"* * * * *", "Nowhere/City", 0, time.Minute, "schedule"},
		{"", "", time.Second, time.Minute, "period_seconds"},
		{"", "", time.Hour, time.Second, "grace_seconds"},
		{"@daily", "UTC", 0, time.Hour, ""},
		{"", "", time.Hour, time.Minute, ""},
	}
	for _, c := range cases {
		field, _ := Validate(c.cron, c.tz, c.period, c.grace)
		if field != c.field {
			t.Errorf("Validate(%q,%q,%s,%s): got field %q, want %q", c.cron, c.tz, c.period, c.grace, field, c.field)
		}
	}
}

func TestTokenHash(t *testing.T) {
	s, h := NewToken()
	if Hash(s) != h || len(h) != 64 || s[:4] != TokenPrefix {
		t.Fatalf("token %q hash %q", s, h)
	}
}
