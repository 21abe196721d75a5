package tools

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"
)

// QueryDeps are what every query tool needs from the server.
type QueryDeps struct {
	Endpoints Endpoints
	Egress    *Egress
	Now       func() time.Time
}

func (d QueryDeps) query(q *Query) *Query {
	q.Endpoints, q.Egress, q.Now = d.Endpoints, d.Egress, d.Now
	return q
}

// maxPoints bounds a range query's samples per series (Prometheus itself
// refuses more than 11,000).
const maxPoints = 500

// PrometheusQuery is prometheus_query: a PromQL instant query.
func PrometheusQuery(d QueryDeps) *Query {
	return d.query(&Query{Name: "prometheus_query", Kind: "prometheus",
		Description: "Evaluate a PromQL expression at one instant (default now) on a Prometheus-compatible server " +
			"(Prometheus, Thanos, Mimir, VictoriaMetrics). Read-only.",
		Params:   map[string]any{"query": str("PromQL expression", "minLength", 1, "maxLength", 8192), "time": timeProp},
		Required: []string{"query"},
		Build: func(m map[string]any, now time.Time) (string, url.Values, error) {
			at, err := argTime(m, "time", now)
			if err != nil {
				return "", nil, err
			}
			return "/api/v1/query", url.Values{"query": {argString(m, "query", "")}, "time": {at.UTC().Format(time.RFC3339)}}, nil
		},
		Format: formatPrometheus})
}

// PrometheusQueryRange is prometheus_query_range: a PromQL range query.
func PrometheusQueryRange(d QueryDeps) *Query {
	return d.query(&Query{Name: "prometheus_query_range", Kind: "prometheus",
		Description: "Evaluate a PromQL expression over a time range (default the last hour, ending now) on a " +
			"Prometheus-compatible server. Read-only.",
		Params: map[string]any{"query": str("PromQL expression", "minLength", 1, "maxLength", 8192),
			"since": durationProp, "end": timeProp, "step": durationProp},
		Required: []string{"query"},
		Build: func(m map[string]any, now time.Time) (string, url.Values, error) {
			end, err := argTime(m, "end", now)
			if err != nil {
				return "", nil, err
			}
			since, err := argDuration(m, "since", time.Hour)
			if err != nil {
				return "", nil, err
			}
			step, err := argDuration(m, "step", 0)
			if err != nil {
				return "", nil, err
			}
			if step == 0 {
				step = max(since/100, 15*time.Second).Round(time.Second)
			}
			if since/step > maxPoints {
				return "", nil, fmt.Errorf("step %s over %s gives more than %d points per series; use a larger step", step, since, maxPoints)
			}
			return "/api/v1/query_range", url.Values{"query": {argString(m, "query", "")},
				"start": {end.Add(-since).UTC().Format(time.RFC3339)}, "end": {end.UTC().Format(time.RFC3339)},
				"step": {fmt.Sprintf("%gs", step.Seconds())}}, nil
		},
		Format: formatPrometheus})
}

// promResponse is the envelope of Prometheus's HTTP API.
type promResponse struct {
	Status    string          `json:"status"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
	Warnings  []string        `json:"warnings"`
	Data      json.RawMessage `json:"data"`
}

type promData struct {
	ResultType string          `json:"resultType"`
	Result     json.RawMessage `json:"result"`
}

type promSeries struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
	Values [][2]any          `json:"values"`
}

// formatPrometheus renders vectors and matrices one series per line, the
// way people read them (name{labels} value), instead of nested JSON.
func formatPrometheus(body []byte) (string, error) {
	var r promResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return "", err
	}
	if r.Status != "success" {
		return "", fmt.Errorf("%s: %s", r.ErrorType, r.Error)
	}
	var d promData
	if err := json.Unmarshal(r.Data, &d); err != nil {
		return "", err
	}
	var out strings.Builder
	for _, w := range r.Warnings {
		fmt.Fprintf(&out, "warning: %s\n", w)
	}
	switch d.ResultType {
	case "vector", "matrix":
		var series []promSeries
		if err := json.Unmarshal(d.Result, &series); err != nil {
			return "", err
		}
		fmt.Fprintf(&out, "%s, %d series\n", d.ResultType, len(series))
		for _, s := range series {
			out.WriteString(seriesName(s.Metric))
			if d.ResultType == "vector" {
				fmt.Fprintf(&out, " %v @%v\n", s.Value[1], s.Value[0])
				continue
			}
			out.WriteString("\n")
			for _, v := range s.Values {
				fmt.Fprintf(&out, "  %v %v\n", v[0], v[1])
			}
		}
	default: // scalar, string
		fmt.Fprintf(&out, "%s %s\n", d.ResultType, d.Result)
	}
	return out.String(), nil
}

func seriesName(m map[string]string) string {
	name := m["__name__"]
	keys := make([]string, 0, len(m))
	for k := range m {
		if k != "__name__" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%q", k, m[k])
	}
	return name + "{" + strings.Join(parts, ", ") + "}"
}
