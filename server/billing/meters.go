package billing

// The meters of metering and statements.
const (
	MeterAgentRuns      = "agent_runs"
	MeterAgentTokens    = "agent_tokens"
	MeterLLMCost        = "llm_cost_usd"
	MeterWebhookEvents  = "webhook_events"
	MeterKnowledgeBytes = "knowledge_bytes"
)

// Meters lists every meter in statement order.
func Meters() []string {
	return []string{MeterAgentRuns, MeterAgentTokens, MeterLLMCost, MeterWebhookEvents, MeterKnowledgeBytes}
}
