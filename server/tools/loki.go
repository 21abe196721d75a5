package tools

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// LokiQuery is loki_query: log lines from Loki over a recent window.
func LokiQuery(d QueryDeps) *Query {
	return d.query(&Query{Name: "loki_query", Kind: "loki",
		Description: `Read log lines from Loki with a LogQL query such as {app="api"} |= "error", newest first, ` +
			"over a recent window (default the last hour). Read-only.",
		Params: map[string]any{"query": str("LogQL query", "minLength", 1, "maxLength", 8192), "since": durationProp,
			"limit": map[string]any{"type": "integer", "minimum": 1, "maximum": 1000}},
		Required: []string{"query"},
		Build: func(m map[string]any, now time.Time) (string, url.Values, error) {
			since, err := argDuration(m, "since", time.Hour)
			if err != nil {
				return "", nil, err
			}
			limit := 100
			if f, ok := m["limit"].(float64); ok {
				limit = int(f)
			}
			return "/loki/api/v1/query_range", url.Values{"query": {argString(m, "query", "")},
				"start": {strconv.FormatInt(now.Add(-since).UnixNano(), 10)}, "end": {strconv.FormatInt(now.UnixNano(), 10)},
				"limit": {strconv.Itoa(limit)}, "direction": {"backward"}}, nil
		},
		Format: formatLoki})
}

type lokiResponse struct {
	Status string `json:"status"`
	Data   struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	} `json:"data"`
}

type lokiStream struct {
	Stream map[string]string `json:"stream"`
	Values [][2]string       `json:"values"`
}

// formatLoki renders streams as "time line" under each stream's labels;
// metric queries (matrix, vector) use the Prometheus rendering.
func formatLoki(body []byte) (string, error) {
	var r lokiResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return "", err
	}
	if r.Data.ResultType != "streams" {
		return formatPrometheus(body)
	}
	var streams []lokiStream
	if err := json.Unmarshal(r.Data.Result, &streams); err != nil {
		return "", err
	}
	var out strings.Builder
	n := 0
	for _, s := range streams {
		n += len(s.Values)
	}
	fmt.Fprintf(&out, "%d lines in %d streams\n", n, len(streams))
	for _, s := range streams {
		out.WriteString(seriesName(s.Stream) + "\n")
		for _, v := range s.Values {
			ts := v[0]
			if ns, err := strconv.ParseInt(v[0], 10, 64); err == nil {
				ts = time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
			}
			fmt.Fprintf(&out, "  %s %s\n", ts, v[1])
		}
	}
	return out.String(), nil
}
