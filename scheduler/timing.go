package scheduler

import (
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // IANA zones must resolve in a static binary on a host without /usr/share/zoneinfo

	"github.com/opsagent/opsagent/store"
	"github.com/robfig/cron/v3"
)

// MinInterval is the shortest @every a task may use: a task is agent work,
// not a health probe, and every fire costs a session.
const MinInterval = time.Minute

// maxCatchUp bounds the walk over missed fires after a long stop.
const maxCatchUp = 100000

// ValidateSchedule checks a task schedule: a 5-field cron expression or a
// descriptor (@hourly, @daily, @every 15m), read in the IANA zone tz. The
// zone belongs in tz, so CRON_TZ= and TZ= prefixes are refused.
func ValidateSchedule(expr, tz string) (cron.Schedule, error) {
	e := strings.TrimSpace(expr)
	if strings.HasPrefix(e, "CRON_TZ=") || strings.HasPrefix(e, "TZ=") {
		return nil, fmt.Errorf("put the time zone in the timezone field, not in the schedule")
	}
	if tz == "" {
		tz = "UTC"
	}
	s, err := ParseSchedule(e, tz)
	if err != nil {
		return nil, err
	}
	if d, ok := s.(cron.ConstantDelaySchedule); ok && d.Delay < MinInterval {
		return nil, fmt.Errorf("@every must be at least %s", MinInterval)
	}
	if s.Next(time.Now()).IsZero() {
		return nil, fmt.Errorf("schedule never fires")
	}
	return s, nil
}

// ValidateTimezone checks an IANA zone name ("UTC", "Europe/Paris").
func ValidateTimezone(tz string) error {
	if tz == "" || tz == "Local" {
		return fmt.Errorf("unknown time zone %q", tz)
	}
	if _, err := time.LoadLocation(tz); err != nil {
		return fmt.Errorf("unknown time zone %q", tz)
	}
	return nil
}

// NextRun is the store.NextRunFunc of tasks: the first fire after now of an
// enabled scheduled task, nil for a disabled or unscheduled one.
func NextRun(t *store.Task, now time.Time) (*time.Time, error) {
	if !t.Enabled || t.Schedule == "" {
		return nil, nil
	}
	s, err := ValidateSchedule(t.Schedule, t.Timezone)
	if err != nil {
		return nil, err
	}
	n := s.Next(now).UTC()
	return &n, nil
}

// NextRuns lists the next n fires after from (for previews).
func NextRuns(s cron.Schedule, from time.Time, n int) []time.Time {
	out := make([]time.Time, 0, n)
	t := from
	for len(out) < n {
		t = s.Next(t)
		if t.IsZero() {
			break
		}
		out = append(out, t)
	}
	return out
}

// PlanFire decides what a due task does at now. Its fires run from
// t.NextRunAt up to now; the latest one is on time when it is at most grace
// old. Older fires were missed (the scheduler was stopped):
//   - missed_fire_policy run_once: one run, for the latest fire, counting the
//     others as folded into it;
//   - missed_fire_policy skip: only an on-time latest fire runs; missed ones
//     are dropped (and logged by the caller).
//
// Either way next_run_at moves to the first fire after now.
func PlanFire(t *store.Task, now time.Time, grace time.Duration) store.Fire {
	f := store.Fire{Task: t, SkipIfActive: t.OverlapPolicy != "queue"}
	s, err := ValidateSchedule(t.Schedule, t.Timezone)
	if err != nil || t.NextRunAt == nil {
		return f // nothing runs and next_run_at becomes NULL: a schedule that no longer parses stops firing
	}
	latest, count := *t.NextRunAt, 1
	for n := s.Next(latest); !n.IsZero() && !n.After(now) && count < maxCatchUp; n = s.Next(n) {
		latest, count = n, count+1
	}
	onTime := now.Sub(latest) <= grace
	missed := count - 1
	if !onTime {
		missed = count
	}
	next := s.Next(now).UTC()
	f.NextRunAt = &next
	f.ScheduledFor = latest.UTC()
	if t.MissedFirePolicy == "skip" {
		f.Run, f.Dropped = onTime, missed
	} else {
		f.Run, f.MissedFires = true, missed
	}
	return f
}
