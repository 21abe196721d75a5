package runner

// report tells telemetry how a run (a chat turn, or a whole task run)
// ended and what its model calls used.
func (r *Runner) report(trigger, status string, res turnResult) {
	r.d.Telemetry.RunFinished(trigger, status, res.steps)
	if res.provider != "" && res.usage.Total() > 0 {
		r.d.Telemetry.LLMUsage(res.provider, res.model, res.usage.InputTokens, res.usage.OutputTokens, res.cost)
	}
}
