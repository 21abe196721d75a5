package llm

import (
	"context"
	"errors"
	"time"
)

// Failover records one model that failed before another answered.
type Failover struct {
	From   string     `json:"from"` // the model that failed
	To     string     `json:"to"`   // the model tried next
	Class  ErrorClass `json:"class"`
	Reason string     `json:"reason"`
}

// Member is one model of a failover chain: its own provider (another
// vendor, or another base URL) with its own answer reserve.
type Member struct {
	Provider  Provider
	Model     string
	MaxTokens int // 0 keeps the request's
}

// DefaultFailoverRetryAfter is how long a 429's Retry-After may be before
// the chain moves on instead of waiting.
const DefaultFailoverRetryAfter = 10 * time.Second

// NewChain returns a Provider that asks members in order, moving to the
// next on a timeout, a 5xx, a refused or cut connection, or a 429 whose
// Retry-After exceeds maxRetryAfter (or that outlasted its retries). Any
// other failure (a bad key, a refused request, an overflow) is the
// request's fault, not the model's, and is returned as it is. A member that
// already streamed text is never abandoned: the caller has shown it.
func NewChain(maxRetryAfter time.Duration, members ...Member) Provider {
	if maxRetryAfter <= 0 {
		maxRetryAfter = DefaultFailoverRetryAfter
	}
	if len(members) == 1 {
		return members[0].Provider
	}
	return &chain{members: members, maxRetryAfter: maxRetryAfter}
}

type chain struct {
	members       []Member
	maxRetryAfter time.Duration
}

func (c *chain) Stream(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	if onDelta == nil {
		onDelta = func(Delta) {}
	}
	var failed []Failover
	requested := req.Model
	for i, m := range c.members {
		r := req
		if i > 0 || requested == "" {
			r.Model = m.Model
		}
		if m.MaxTokens > 0 {
			r.MaxTokens = m.MaxTokens
		}
		streamed := false
		resp, err := m.Provider.Stream(ctx, r, func(d Delta) { streamed = true; onDelta(d) })
		if err == nil {
			if resp.Model == "" {
				resp.Model = r.Model
			}
			resp.Failovers = append(failed, resp.Failovers...)
			return resp, nil
		}
		if streamed || i == len(c.members)-1 || ctx.Err() != nil || !c.movesOn(err) {
			return Response{}, err
		}
		failed = append(failed, Failover{From: r.Model, To: c.members[i+1].Model, Class: ClassOf(err), Reason: err.Error()})
	}
	return Response{}, errors.New("llm: empty failover chain")
}

func (c *chain) movesOn(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Class {
	case ClassTimeout, ClassServer, ClassNetwork:
		return true
	case ClassRateLimit:
		return e.RetryAfter > c.maxRetryAfter || e.Attempts > 1
	}
	return false
}

// Model is the primary's model, the one requests name by default.
func (c *chain) Model() string { return c.members[0].Model }

// Name is the primary's provider name.
func (c *chain) Name() string {
	if n, ok := c.members[0].Provider.(interface{ Name() string }); ok {
		return n.Name()
	}
	return ""
}
