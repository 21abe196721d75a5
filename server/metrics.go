package server

import (
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics is the server's Prometheus registry and the instruments the
// request pipeline and the engines (through server/telemetry) feed. Names
// follow Prometheus conventions: opsagent_ prefix, base units, _total for
// counters. deploy/grafana and deploy/prometheus read them.
type metrics struct {
	reg *prometheus.Registry

	httpRequests *prometheus.CounterVec   // method, route, code
	httpDuration *prometheus.HistogramVec // method, route
	streams      *prometheus.GaugeVec     // route: open SSE / streaming responses (console viewers, chat)

	webhookAccepted   prometheus.Counter
	webhookDuplicates prometheus.Counter
	webhookVerifyFail prometheus.Counter
	webhookBatch      prometheus.Histogram
	webhookCommit     prometheus.Histogram

	agentRuns   *prometheus.CounterVec // trigger, outcome
	agentSteps  prometheus.Counter
	llmTokens   *prometheus.CounterVec // provider, model, kind
	llmCost     *prometheus.CounterVec // provider, model
	llmFailover *prometheus.CounterVec // from, to, class (metrics_llm.go)

	schedFires prometheus.Counter
	schedLag   prometheus.Histogram
}

func newMetrics() *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	}
	m.httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "opsagent_http_requests_total",
		Help: "HTTP requests by method, route template and status code."}, []string{"method", "route", "code"})
	m.httpDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "opsagent_http_request_duration_seconds",
		Help:    "HTTP request latency by method and route template (streams count until they end).",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}}, []string{"method", "route"})
	m.streams = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "opsagent_sse_viewers",
		Help: "Open server-sent event streams by route template (session viewers, chat turns, MCP)."}, []string{"route"})
	m.webhookAccepted = counter("opsagent_webhook_events_accepted_total", "Webhook events stored durably.")
	m.webhookDuplicates = counter("opsagent_webhook_events_duplicate_total", "Webhook events dropped by the dedupe window.")
	m.webhookVerifyFail = counter("opsagent_webhook_verification_failures_total", "Webhook deliveries refused for a bad signature or token.")
	m.webhookBatch = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "opsagent_webhook_commit_batch_size",
		Help: "Events per ingest group commit.", Buckets: prometheus.ExponentialBuckets(1, 2, 10)})
	m.webhookCommit = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "opsagent_webhook_commit_duration_seconds",
		Help: "Latency of one ingest group commit (fsync included).", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 12)})
	m.agentRuns = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "opsagent_agent_runs_total",
		Help: "Agent runs ended, by trigger and outcome."}, []string{"trigger", "outcome"})
	m.agentSteps = counter("opsagent_agent_steps_total", "Agent model steps taken.")
	m.llmTokens = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "opsagent_llm_tokens_total",
		Help: "LLM tokens by provider, model and kind (input, output)."}, []string{"provider", "model", "kind"})
	m.llmCost = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "opsagent_llm_cost_usd_total",
		Help: "LLM cost in USD at the configured prices, by provider and model."}, []string{"provider", "model"})
	m.llmFailover = newFailoverCounter()
	m.schedFires = counter("opsagent_scheduler_fires_total", "Task fires recorded by the scheduler.")
	m.schedLag = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "opsagent_scheduler_lag_seconds",
		Help: "How late each fire was recorded against its schedule.", Buckets: []float64{.5, 1, 2, 5, 10, 30, 60, 300, 900}})
	m.reg.MustRegister(m.httpRequests, m.httpDuration, m.streams,
		m.webhookAccepted, m.webhookDuplicates, m.webhookVerifyFail, m.webhookBatch, m.webhookCommit,
		m.agentRuns, m.agentSteps, m.llmTokens, m.llmCost, m.llmFailover, m.schedFires, m.schedLag,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "opsagent_build_info", Help: "Always 1; the version is a label.",
			ConstLabels: prometheus.Labels{"version": Version}}, func() float64 { return 1 }))
	return m
}

// routeObserver is one route's instruments. The latency child is resolved
// on the route's first request and kept, so later requests pay no label
// lookup for it, and routes never called export no empty series.
type routeObserver struct {
	m        *metrics
	method   string
	route    string
	duration atomic.Pointer[prometheus.Observer]
	// last is the counter child of the status seen last: a route answers
	// mostly one status, which then costs no label hashing nor strconv.
	last atomic.Pointer[statusCounter]
}

type statusCounter struct {
	status int
	c      prometheus.Counter
}

func (m *metrics) forRoute(rt *Route) *routeObserver {
	return &routeObserver{m: m, method: rt.Method, route: rt.Path}
}

// observe records one finished request.
func (o *routeObserver) observe(status int, took time.Duration) {
	if status == 0 {
		status = http.StatusOK
	}
	d := o.duration.Load()
	if d == nil {
		obs := o.m.httpDuration.WithLabelValues(o.method, o.route)
		d = &obs
		o.duration.Store(d)
	}
	(*d).Observe(took.Seconds())
	sc := o.last.Load()
	if sc == nil || sc.status != status {
		sc = &statusCounter{status: status, c: o.m.httpRequests.WithLabelValues(o.method, o.route, strconv.Itoa(status))}
		o.last.Store(sc)
	}
	sc.c.Inc()
}

// streamOpened counts an open stream until the returned func is called.
func (o *routeObserver) streamOpened() func() {
	g := o.m.streams.WithLabelValues(o.route)
	g.Inc()
	return g.Dec
}

// handler serves the registry in the exposition format Prometheus negotiates.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// The telemetry interfaces, for the engines.

func (m *metrics) Accepted(n int)      { m.webhookAccepted.Add(float64(n)) }
func (m *metrics) Duplicate()          { m.webhookDuplicates.Inc() }
func (m *metrics) VerificationFailed() { m.webhookVerifyFail.Inc() }
func (m *metrics) BatchCommitted(size int, took time.Duration) {
	m.webhookBatch.Observe(float64(size))
	m.webhookCommit.Observe(took.Seconds())
}
func (m *metrics) RunFinished(trigger, outcome string, steps int) {
	m.agentRuns.WithLabelValues(trigger, outcome).Inc()
	m.agentSteps.Add(float64(steps))
}
func (m *metrics) LLMUsage(provider, model string, in, out int, cost float64) {
	m.llmTokens.WithLabelValues(provider, model, "input").Add(float64(in))
	m.llmTokens.WithLabelValues(provider, model, "output").Add(float64(out))
	if cost > 0 {
		m.llmCost.WithLabelValues(provider, model).Add(cost)
	}
}
func (m *metrics) Fired(lag time.Duration) {
	m.schedFires.Inc()
	m.schedLag.Observe(max(lag, 0).Seconds())
}
