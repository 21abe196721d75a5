// Package ratelimit is an in-memory sliding-window limiter keyed by string
// (an address, a user, an API key). One process serves the whole product, so
// memory is the right place: no round trip before the expensive work it guards.
package ratelimit

import (
	"sync"
	"time"
)

// Limiter allows Limit events per Window for each key. It uses the
// two-bucket sliding-window estimate: the previous window's count weighted by
// how much of it still overlaps, plus the current window's.
type Limiter struct {
	Limit  int
	Window time.Duration
	Now    func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
	sweep   time.Time
}

type bucket struct {
	start     time.Time
	prev, cur int
}

// New returns a limiter of limit events per window.
func New(limit int, window time.Duration) *Limiter {
	return &Limiter{Limit: limit, Window: window, Now: time.Now, buckets: map[string]*bucket{}}
}

// Allow records one event for key and reports whether it is within the limit;
// when it is not, retryAfter says how long until one more would be.
func (l *Limiter) Allow(key string) (ok bool, retryAfter time.Duration) {
	return l.AllowN(key, 1)
}

// AllowN is Allow for n events at once.
func (l *Limiter) AllowN(key string, n int) (bool, time.Duration) {
	now := l.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.maybeSweep(now)
	b := l.buckets[key]
	if b == nil {
		b = &bucket{start: now.Truncate(l.Window)}
		l.buckets[key] = b
	}
	l.roll(b, now)
	elapsed := now.Sub(b.start)
	weight := 1 - float64(elapsed)/float64(l.Window)
	est := float64(b.prev)*weight + float64(b.cur)
	if est+float64(n) > float64(l.Limit) {
		// Time until the weighted previous count has decayed enough.
		retry := b.start.Add(l.Window).Sub(now)
		if b.prev > 0 {
			need := est + float64(n) - float64(l.Limit)
			retry = time.Duration(need / float64(b.prev) * float64(l.Window))
			if retry <= 0 || float64(b.cur)+float64(n) > float64(l.Limit) {
				retry = b.start.Add(l.Window).Sub(now)
			}
		}
		if retry < time.Second {
			retry = time.Second
		}
		return false, retry
	}
	b.cur += n
	return true, 0
}

// Check reports whether one more event for key would be within the limit,
// without recording it: a guard that counts only failures checks first and
// records with Allow when the attempt fails.
func (l *Limiter) Check(key string) (bool, time.Duration) {
	ok, retry := l.AllowN(key, 1)
	if ok {
		l.mu.Lock()
		if b := l.buckets[key]; b != nil && b.cur > 0 {
			b.cur--
		}
		l.mu.Unlock()
	}
	return ok, retry
}

// Reset forgets key (a successful login clears its failures).
func (l *Limiter) Reset(key string) {
	l.mu.Lock()
	delete(l.buckets, key)
	l.mu.Unlock()
}

func (l *Limiter) roll(b *bucket, now time.Time) {
	start := now.Truncate(l.Window)
	switch {
	case start.Equal(b.start):
	case start.Sub(b.start) == l.Window:
		b.prev, b.cur, b.start = b.cur, 0, start
	default:
		b.prev, b.cur, b.start = 0, 0, start
	}
}

// maybeSweep drops idle keys so memory stays bounded under address spraying.
func (l *Limiter) maybeSweep(now time.Time) {
	if now.Sub(l.sweep) < l.Window {
		return
	}
	l.sweep = now
	for k, b := range l.buckets {
		if now.Sub(b.start) >= 2*l.Window {
			delete(l.buckets, k)
		}
	}
}
