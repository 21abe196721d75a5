// Package telemetry is the narrow door through which the product's engines
// (webhook pipeline, agent runner, scheduler) report what they do. It holds
// interfaces and no-op defaults only: the server plugs in its Prometheus
// implementation (server/metrics.go), so an engine never imports a metrics
// library and its tests need none.
package telemetry

import "time"

// Webhooks is told about the ingest pipeline's work.
type Webhooks interface {
	// Accepted counts events stored durably (after their commit).
	Accepted(n int)
	// Duplicate counts an event dropped by the dedupe window.
	Duplicate()
	// VerificationFailed counts a delivery refused for its signature or token.
	VerificationFailed()
	// BatchCommitted reports one group commit: how many events, how long the commit took.
	BatchCommitted(size int, took time.Duration)
}

// Agent is told about agent runs and their model calls.
type Agent interface {
	// RunFinished reports one ended run: how it was started (chat, task,
	// resume), how it ended (completed, failed, waiting_approval, ...) and
	// how many model steps it took.
	RunFinished(trigger, outcome string, steps int)
	// LLMUsage reports one model call's tokens and its cost in USD.
	LLMUsage(provider, model string, inputTokens, outputTokens int, costUSD float64)
}

// Scheduler is told about task fires.
type Scheduler interface {
	// Fired reports one recorded fire and how late it was recorded against its schedule.
	Fired(lag time.Duration)
}

// Nop implements every interface and does nothing; engines default to it.
type Nop struct{}

func (Nop) Accepted(int)                               {}
func (Nop) Duplicate()                                 {}
func (Nop) VerificationFailed()                        {}
func (Nop) BatchCommitted(int, time.Duration)          {}
func (Nop) RunFinished(string, string, int)            {}
func (Nop) LLMUsage(string, string, int, int, float64) {}
func (Nop) Fired(time.Duration)                        {}
