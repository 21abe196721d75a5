package server

import "github.com/prometheus/client_golang/prometheus"

func newFailoverCounter() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "opsagent_llm_failovers_total",
		Help: "Model calls that moved to the org's next fallback model, by the model that failed, the one tried next, and why (llm error class)."},
		[]string{"from", "to", "class"})
}

// LLMFailover counts one failover (runner.failedOver calls it).
func (m *metrics) LLMFailover(from, to, class string) {
	m.llmFailover.WithLabelValues(from, to, class).Inc()
}
