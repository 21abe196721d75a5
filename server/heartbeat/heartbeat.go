// Package heartbeat holds the rules of heartbeat checks (dead-man's
// switches) that need no HTTP or SQL: when the next ping is due, the ping
// secret and its hash, and the badge a check shows.
package heartbeat

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/opsagent/opsagent/scheduler"
	"github.com/opsagent/opsagent/server/auth"
	"github.com/opsagent/opsagent/store"
)

// Limits of a check's schedule.
const (
	MinPeriod = time.Minute
	MaxPeriod = 366 * 24 * time.Hour
	MinGrace  = time.Minute
	MaxGrace  = 31 * 24 * time.Hour
	// TokenPrefix marks a ping secret so it is recognisable in logs and scanners.
	TokenPrefix = "ohb_"
)

// NewToken returns a fresh ping secret (shown once) and its stored hash.
func NewToken() (secret, hash string) {
	secret = TokenPrefix + auth.RandomToken(24)
	return secret, Hash(secret)
}

// Hash is how a ping secret is stored and looked up: the secrets are long
// and random, so one SHA-256 and an indexed equality is enough, and the
// lookup never compares the secret itself byte by byte.
func Hash(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// Validate checks a schedule: exactly one of cron (with a time zone) or
// period, and a grace time. It returns the field at fault.
func Validate(cron, tz string, period, grace time.Duration) (field string, err error) {
	switch {
	case cron == "" && period == 0:
		return "schedule", errors.New("give a cron schedule or a period_seconds")
	case cron != "" && period != 0:
		return "schedule", errors.New("give a cron schedule or a period_seconds, not both")
	case cron != "":
		if _, err := scheduler.ParseSchedule(cron, tz); err != nil {
			return "schedule", fmt.Errorf("schedule: %v", err)
		}
	case period < MinPeriod || period > MaxPeriod:
		return "period_seconds", fmt.Errorf("period_seconds must be between %d and %d", int(MinPeriod/time.Second), int(MaxPeriod/time.Second))
	}
	if grace < MinGrace || grace > MaxGrace {
		return "grace_seconds", fmt.Errorf("grace_seconds must be between %d and %d", int(MinGrace/time.Second), int(MaxGrace/time.Second))
	}
	return "", nil
}

// NextDue is when a check expects its next ping after t: t plus the period,
// or the next cron time after t in the check's time zone.
func NextDue(c *store.HeartbeatCheck, t time.Time) time.Time {
	if c.Schedule == "" {
		return t.Add(c.Period)
	}
	s, err := scheduler.ParseSchedule(c.Schedule, c.Timezone)
	if err != nil { // validated on save; a zone removed from the system falls back to a day
		return t.Add(24 * time.Hour)
	}
	return s.Next(t).UTC()
}

// Schedule sets a check's due and deadline as if its last ping were at t.
func Schedule(c *store.HeartbeatCheck, t time.Time) {
	c.DueAt = NextDue(c, t)
	c.DeadlineAt = c.DueAt.Add(c.Grace)
}

// Badge is the right half of a check's badge and its colour.
func Badge(c *store.HeartbeatCheck) (label, color string) {
	switch {
	case !c.Enabled:
		return "paused", "#9f9f9f"
	case c.Status == store.HeartbeatDown:
		return "down", "#e05d44"
	case c.Status == store.HeartbeatNew:
		return "waiting", "#9f9f9f"
	case c.Status == store.HeartbeatStarted:
		return "running", "#007ec6"
	}
	return "up", "#4c1"
}
