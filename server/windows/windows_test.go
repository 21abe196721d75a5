package windows

import (
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/webhook"
	"github.com/opsagent/opsagent/store"
)

func TestActiveRecurringInZone(t *testing.T) {
	// Saturdays 02:00 Berlin for two hours.
	w := &store.MaintenanceWindow{Schedule: "0 2 * * 6", Timezone: "Europe/Berlin", Duration: 2 * time.Hour, Enabled: true, Mode: store.WindowSuppress}
	sat := time.Date(2026, 11, 28, 1, 30, 0, 0, time.UTC) // 02:30 CET
	if ok, end := Active(w, sat); !ok || !end.Equal(time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC)) {
		t.Fatalf("inside: %v %s", ok, end)
	}
	if ok, _ := Active(w, sat.Add(2*time.Hour)); ok {
		t.Fatal("after the end")
	}
	if ok, _ := Active(w, sat.Add(-31*time.Minute)); ok {
		t.Fatal("before the start")
	}
	if n := Next(w, sat); !n.Equal(time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC)) {
		t.Fatalf("next: %s", n)
	}
}

func TestMatches(t *testing.T) {
	w := &store.MaintenanceWindow{MatchSources: []string{"alertmanager"}, MatchLabels: map[string]string{"cluster": "prod-*"}}
	in := []webhook.Alert{{Labels: map[string]string{"cluster": "prod-eu"}}}
	mixed := append(in, webhook.Alert{Labels: map[string]string{"cluster": "staging"}})
	if !Matches(w, "alertmanager", in) || Matches(w, "grafana", in) || Matches(w, "alertmanager", mixed) || Matches(w, "alertmanager", nil) {
		t.Fatal("label and source matching")
	}
}

func TestValidate(t *testing.T) {
	now := time.Now()
	later := now.Add(time.Hour)
	for _, c := range []struct {
		w     store.MaintenanceWindow
		field string
	}{
		{store.MaintenanceWindow{Mode: "suppress"}, "schedule"},
		{store.MaintenanceWindow{StartsAt: &later, EndsAt: &now, Mode: "suppress"}, "ends_at"},
		{store.MaintenanceWindow{Schedule: "@daily", Timezone: "UTC", Duration: time.Second, Mode: "suppress"}, "duration_seconds"},
		{store.MaintenanceWindow{Schedule: "@daily", Timezone: "UTC", Duration: time.Hour, Mode: "loud"}, "mode"},
		{store.MaintenanceWindow{StartsAt: &now, EndsAt: &later, Mode: "observe", MatchSources: []string{"nagios"}}, "match_sources"},
		{store.MaintenanceWindow{StartsAt: &now, EndsAt: &later, Mode: "observe", MatchLabels: map[string]string{"a": "["}}, "match_labels"},
		{store.MaintenanceWindow{StartsAt: &now, EndsAt: &later, Mode: "observe"}, ""},
	} {
		if f, _ := Validate(&c.w); f != c.field {
			t.Errorf("%+v: got %q, want %q", c.w, f, c.field)
		}
	}
}
