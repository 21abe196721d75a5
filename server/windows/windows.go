// Package windows decides whether a maintenance window is active at a
// moment and whether an event's alerts fall under it. It knows no HTTP
// and no SQL.
package windows

import (
	"errors"
	"fmt"
	"path"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/opsagent/opsagent/scheduler"
	"github.com/opsagent/opsagent/server/webhook"
	"github.com/opsagent/opsagent/store"
)

// Limits of a window.
const (
	MaxDuration = 31 * 24 * time.Hour
	MaxLabels   = 20
	MaxSources  = 20
)

// Validate checks a window's shape: one-off (start before end) or
// recurring (cron, zone, duration), a known mode, valid label globs and
// sources. It returns the field at fault.
func Validate(w *store.MaintenanceWindow) (field string, err error) {
	oneOff := w.StartsAt != nil || w.EndsAt != nil
	switch {
	case oneOff && w.Schedule != "":
		return "schedule", errors.New("a window is one-off (starts_at, ends_at) or recurring (schedule, duration_seconds), not both")
	case oneOff:
		if w.StartsAt == nil || w.EndsAt == nil || !w.EndsAt.After(*w.StartsAt) {
			return "ends_at", errors.New("a one-off window needs starts_at and a later ends_at")
		}
		if w.EndsAt.Sub(*w.StartsAt) > MaxDuration {
			return "ends_at", fmt.Errorf("a window lasts at most %s", MaxDuration)
		}
	case w.Schedule == "":
		return "schedule", errors.New("give starts_at and ends_at, or a cron schedule with duration_seconds")
	default:
		if _, err := scheduler.ParseSchedule(w.Schedule, w.Timezone); err != nil {
			return "schedule", fmt.Errorf("schedule: %v", err)
		}
		if w.Duration < time.Minute || w.Duration > MaxDuration {
			return "duration_seconds", fmt.Errorf("duration_seconds must be between 60 and %d", int(MaxDuration/time.Second))
		}
	}
	if w.Mode != store.WindowSuppress && w.Mode != store.WindowObserve {
		return "mode", errors.New("mode is suppress or observe")
	}
	if len(w.MatchLabels) > MaxLabels {
		return "match_labels", fmt.Errorf("at most %d labels", MaxLabels)
	}
	for k, g := range w.MatchLabels {
		if k == "" || len(k) > 128 || len(g) > 256 {
			return "match_labels", errors.New("a label name is 1 to 128 characters, its glob at most 256")
		}
		if _, err := path.Match(g, ""); err != nil {
			return "match_labels", fmt.Errorf("label %s: bad glob %q", k, g)
		}
	}
	if len(w.MatchSources) > MaxSources {
		return "match_sources", fmt.Errorf("at most %d sources", MaxSources)
	}
	for _, s := range w.MatchSources {
		if _, err := webhook.ParseProvider(s); err != nil {
			return "match_sources", fmt.Errorf("unknown source %q", s)
		}
	}
	return "", nil
}

// Active reports whether w covers t, and when that occurrence ends. A
// recurring window is active when its last start at or before t is less
// than Duration ago: the first start after t-Duration is not after t.
func Active(w *store.MaintenanceWindow, t time.Time) (bool, time.Time) {
	if !w.Enabled {
		return false, time.Time{}
	}
	if w.StartsAt != nil && w.EndsAt != nil {
		return !t.Before(*w.StartsAt) && t.Before(*w.EndsAt), *w.EndsAt
	}
	s, err := schedule(w)
	if err != nil {
		return false, time.Time{}
	}
	start := s.Next(t.Add(-w.Duration))
	if start.After(t) {
		return false, time.Time{}
	}
	return true, start.Add(w.Duration).UTC()
}

// Next is the next start of w after t (zero when it never starts again).
func Next(w *store.MaintenanceWindow, t time.Time) time.Time {
	if w.StartsAt != nil {
		if w.StartsAt.After(t) {
			return *w.StartsAt
		}
		return time.Time{}
	}
	s, err := schedule(w)
	if err != nil {
		return time.Time{}
	}
	return s.Next(t).UTC()
}

// Matches reports whether an event of provider with alerts falls under w:
// its source is one of the window's (or the window names none), and every
// alert carries every label the window names with a value matching its
// glob. An event with alerts outside the window is not held back.
func Matches(w *store.MaintenanceWindow, provider string, alerts []webhook.Alert) bool {
	if len(w.MatchSources) > 0 {
		found := false
		for _, s := range w.MatchSources {
			found = found || s == provider
		}
		if !found {
			return false
		}
	}
	if len(w.MatchLabels) == 0 {
		return true
	}
	if len(alerts) == 0 {
		return false
	}
	for _, a := range alerts {
		for k, g := range w.MatchLabels {
			v, ok := a.Labels[k]
			if !ok {
				return false
			}
			if m, _ := path.Match(g, v); !m {
				return false
			}
		}
	}
	return true
}

// Find returns the first of ws active at t that matches the event.
func Find(ws []store.MaintenanceWindow, t time.Time, provider string, alerts []webhook.Alert) *store.WindowMatch {
	for i := range ws {
		w := &ws[i]
		if ok, end := Active(w, t); ok && Matches(w, provider, alerts) {
			return &store.WindowMatch{ID: w.ID, Name: w.Name, Mode: w.Mode, EndsAt: end}
		}
	}
	return nil
}

// schedules caches parsed cron expressions: the dispatcher asks Active for
// every event of a project with recurring windows.
// It stops growing at maxCached expressions (later ones are parsed each time).
var (
	schedules sync.Map // timezone + "\x00" + expr -> cron.Schedule
	cached    atomic.Int64
)

const maxCached = 4096

func schedule(w *store.MaintenanceWindow) (cron.Schedule, error) {
	key := w.Timezone + "\x00" + w.Schedule
	if s, ok := schedules.Load(key); ok {
		return s.(cron.Schedule), nil
	}
	s, err := scheduler.ParseSchedule(w.Schedule, w.Timezone)
	if err != nil {
		return nil, err
	}
	if cached.Add(1) <= maxCached {
		schedules.Store(key, s)
	}
	return s, nil
}
