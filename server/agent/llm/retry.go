package llm

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"
)

// attempter makes exactly one request; retrying decides whether to make
// another, so attempts never multiply.
type attempter interface {
	attempt(ctx context.Context, req Request, onDelta func(Delta)) (Response, error)
}

// retrying is the Provider New returns: per-attempt timeout, bounded
// exponential back-off with jitter, Retry-After honoured up to MaxDelay.
type retrying struct {
	name    string
	model   string
	inner   attempter
	timeout time.Duration
	policy  RetryPolicy
	log     *slog.Logger
}

// Stream implements Provider. An attempt that already delivered text is
// never retried: the caller has shown that text, and a second answer would
// contradict it.
func (r *retrying) Stream(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	if req.Model == "" {
		req.Model = r.model
	}
	if onDelta == nil {
		onDelta = func(Delta) {}
	}
	for attempt := 1; ; attempt++ {
		streamed := false
		resp, err := r.once(ctx, req, func(d Delta) {
			streamed = true
			onDelta(d)
		})
		if err == nil {
			return resp, nil
		}
		e := err.(*Error)
		e.Attempts = attempt
		if !e.Retryable() || streamed || attempt >= r.policy.MaxAttempts ||
			(r.policy.GiveUpAfter > 0 && e.RetryAfter > r.policy.GiveUpAfter) {
			return Response{}, e
		}
		wait := r.backoff(attempt, e.RetryAfter)
		r.log.LogAttrs(ctx, slog.LevelWarn, "llm request failed, retrying",
			slog.String("provider", r.name), slog.String("class", string(e.Class)),
			slog.Int("status", e.Status), slog.Int("attempt", attempt), slog.Duration("wait", wait))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return Response{}, &Error{Class: ClassCanceled, Provider: r.name, Attempts: attempt,
				Message: ctx.Err().Error() + " while waiting to retry after: " + e.Message, Err: ctx.Err()}
		case <-t.C:
		}
	}
}

// Model is the configured model, used when a Request names none; the agent
// reads it to price usage.
func (r *retrying) Model() string { return r.model }

func (r *retrying) once(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	actx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	resp, err := r.inner.attempt(actx, req, onDelta)
	if err != nil {
		return Response{}, classify(r.name, err, ctx, actx)
	}
	return resp, nil
}

// backoff is "equal jitter": half the exponential delay fixed, half random,
// so synchronized clients spread out yet never retry immediately. A server's
// Retry-After is a floor, capped by MaxDelay so one reply cannot park a run.
func (r *retrying) backoff(attempt int, retryAfter time.Duration) time.Duration {
	d := r.policy.BaseDelay << (attempt - 1)
	if d > r.policy.MaxDelay || d <= 0 {
		d = r.policy.MaxDelay
	}
	d = d/2 + rand.N(d/2+1)
	if retryAfter > d {
		d = retryAfter
	}
	return min(d, r.policy.MaxDelay)
}

// Name is the provider's name ("openai" or "anthropic"), for metrics labels.
func (r *retrying) Name() string { return r.name }
