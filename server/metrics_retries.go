package server

import "github.com/prometheus/client_golang/prometheus"

// retryCollector exports the store's write retries (store/write_retry.go):
// how often a transaction lost a race and ran again, by cause, and how often
// one lost every attempt. A rising gave-up count is the alert; retries alone
// are the normal cost of several servers sharing one database.
type retryCollector struct{ s *Server }

var (
	descDBRetries = prometheus.NewDesc("opsagent_db_write_retries_total",
		"Write transactions run again after losing a race, by cause (serialization, deadlock, busy, broken_conn).", []string{"cause"}, nil)
	descDBGaveUp = prometheus.NewDesc("opsagent_db_write_retries_exhausted_total",
		"Write transactions that lost every retry (answered 503 with Retry-After).", nil, nil)
)

func (retryCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descDBRetries
	ch <- descDBGaveUp
}

func (c retryCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.s.db.RetryStats()
	for cause, n := range map[string]uint64{"serialization": st.Serialization, "deadlock": st.Deadlock, "busy": st.Busy, "broken_conn": st.BrokenConn} {
		ch <- prometheus.MustNewConstMetric(descDBRetries, prometheus.CounterValue, float64(n), cause)
	}
	ch <- prometheus.MustNewConstMetric(descDBGaveUp, prometheus.CounterValue, float64(st.GaveUp))
}
