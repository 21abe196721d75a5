package server

import (
	"sync"
	"time"

	"github.com/opsagent/opsagent/server/ratelimit"
)

// beyondState is the in-memory state of heartbeat pings, maintenance
// windows and postmortem drafts, built on first use so that New stays as
// it is.
type beyondState struct {
	once sync.Once
	// pingIP bounds pings per client address (unknown secrets included)
	// before any lookup; pingCheck bounds pings per check.
	pingIP, pingCheck *ratelimit.Limiter
	windows           windowCache
	// previews bounds what-if replays per org: each re-decides up to
	// previewMaxCalls recorded calls twice (shell analysis included).
	previews *ratelimit.Limiter
	// drafting bounds postmortem drafts written at once (each may call the model).
	drafting chan struct{}
}

// Ping limits: a cron job pings a few times per run; a check pinged more
// than this is misconfigured or someone is guessing secrets.
const (
	PingsPerMinutePerIP    = 120
	PingsPerMinutePerCheck = 30
	RulePreviewsPerMinute  = 20
)

func (s *Server) bx() *beyondState {
	b := &s.beyond
	b.once.Do(func() {
		b.pingIP = ratelimit.New(PingsPerMinutePerIP, time.Minute)
		b.pingCheck = ratelimit.New(PingsPerMinutePerCheck, time.Minute)
		b.windows.m = map[string]windowEntry{}
		b.drafting = make(chan struct{}, 2)
		b.previews = ratelimit.New(RulePreviewsPerMinute, time.Minute)
		for _, l := range []*ratelimit.Limiter{b.pingIP, b.pingCheck, b.previews} {
			l.Now = func() time.Time { return s.Now() }
		}
	})
	return b
}
