package investigate

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Endpoint is an integration's HTTP API: its base URL and how a request
// is authenticated (the server fills Auth from the vault).
type Endpoint struct {
	Label   string // the integration's name, shown as the items' origin
	BaseURL string
	Auth    func(*http.Request)
	Client  *http.Client
}

// maxBody bounds what a source reads from an API answer.
const maxBody = 2 << 20

func (e Endpoint) get(ctx context.Context, path string, q url.Values, out any) (string, error) {
	u := strings.TrimRight(e.BaseURL, "/") + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
	if err != nil {
		return u, err
	}
	if e.Auth != nil {
		e.Auth(req)
	}
	c := e.Client
	if c == nil {
		c = http.DefaultClient
	}
	res, err := c.Do(req)
	if err != nil {
		return u, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxBody))
	if err != nil {
		return u, err
	}
	if res.StatusCode/100 != 2 {
		return u, fmt.Errorf("%s answered %d: %s", path, res.StatusCode, cut(strings.TrimSpace(string(body)), 200))
	}
	if err := json.Unmarshal(body, out); err != nil {
		return u, fmt.Errorf("%s answered something that is not its JSON: %v", path, err)
	}
	return u, nil
}

// selector is a PromQL / LogQL label matcher of the alert's identifying
// labels (the ones that name where it fired, not its severity).
func selector(labels map[string]string, keys []string) string {
	var parts []string
	for _, k := range keys {
		if v := labels[k]; v != "" {
			parts = append(parts, k+"="+strconv.Quote(v))
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// identifying labels, in the order a selector lists them.
var promKeys = []string{"job", "instance", "service", "namespace", "pod", "container", "app"}

// Prometheus gathers the alert's own expression (or, without one, the
// series its labels name) over the window before the incident opened.
type Prometheus struct{ Endpoint }

func (Prometheus) Name() string { return "prometheus" }

func (p Prometheus) Gather(ctx context.Context, q Query) ([]Item, error) {
	expr := strings.TrimSpace(q.Expr)
	if expr == "" {
		sel := selector(q.Labels, promKeys)
		if sel == "{}" {
			return nil, nil
		}
		expr = "up" + sel
		if q.Labels["alertname"] != "" {
			expr = sel // every series of the alert's target
		}
	}
	end := q.OpenedAt
	if end.IsZero() {
		end = time.Now()
	}
	start := end.Add(-q.Window)
	step := q.Window / 30
	var out struct {
		Status string `json:"status"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Values [][2]any          `json:"values"`
			} `json:"result"`
		} `json:"data"`
		Error string `json:"error"`
	}
	u, err := p.get(ctx, "/api/v1/query_range", url.Values{"query": {expr}, "start": {unix(start)}, "end": {unix(end.Add(time.Minute))},
		"step": {strconv.Itoa(max(int(step.Seconds()), 1))}}, &out)
	if err != nil {
		return nil, err
	}
	if out.Status != "success" {
		return nil, fmt.Errorf("query %s: %s", expr, out.Error)
	}
	var items []Item
	for i, r := range out.Data.Result {
		if i == 5 {
			break
		}
		var b strings.Builder
		fmt.Fprintf(&b, "query: %s\nseries: %s\n", expr, metricName(r.Metric))
		vals := r.Values
		if len(vals) > 12 { // first, then the last eleven: the trend into the alert
			vals = append(vals[:1:1], vals[len(vals)-11:]...)
		}
		for _, v := range vals {
			ts, _ := v[0].(float64)
			fmt.Fprintf(&b, "%s %v\n", time.Unix(int64(ts), 0).UTC().Format("15:04:05"), v[1])
		}
		items = append(items, Item{Source: "prometheus", Title: metricName(r.Metric), Content: b.String(), Origin: p.Label + " " + u, At: end})
	}
	if len(items) == 0 {
		items = append(items, Item{Source: "prometheus", Title: "no series", Content: "query " + expr + " returned no series in the hour before", Origin: p.Label + " " + u, At: end})
	}
	return items, nil
}

func metricName(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		if k != "__name__" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + strconv.Quote(m[k])
	}
	return m["__name__"] + "{" + strings.Join(parts, ",") + "}"
}

func unix(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }

// Loki gathers the log lines that match the alert's labels in the window.
type Loki struct{ Endpoint }

func (Loki) Name() string { return "loki" }

var lokiKeys = []string{"job", "service", "app", "namespace", "pod", "container", "instance"}

func (l Loki) Gather(ctx context.Context, q Query) ([]Item, error) {
	sel := selector(q.Labels, lokiKeys)
	if sel == "{}" {
		return nil, nil
	}
	end := q.OpenedAt
	if end.IsZero() {
		end = time.Now()
	}
	var out struct {
		Status string `json:"status"`
		Data   struct {
			Result []struct {
				Stream map[string]string `json:"stream"`
				Values [][2]string       `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	u, err := l.get(ctx, "/loki/api/v1/query_range", url.Values{"query": {sel}, "start": {strconv.FormatInt(end.Add(-q.Window).UnixNano(), 10)},
		"end": {strconv.FormatInt(end.Add(time.Minute).UnixNano(), 10)}, "limit": {"50"}, "direction": {"backward"}}, &out)
	if err != nil {
		return nil, err
	}
	if out.Status != "success" {
		return nil, fmt.Errorf("loki query %s failed", sel)
	}
	var b strings.Builder
	n := 0
	for _, r := range out.Data.Result {
		for _, v := range r.Values {
			ns, _ := strconv.ParseInt(v[0], 10, 64)
			fmt.Fprintf(&b, "%s %s\n", time.Unix(0, ns).UTC().Format(time.RFC3339), v[1])
			n++
		}
	}
	if n == 0 {
		return []Item{{Source: "loki", Title: "no log lines", Content: "no lines matched " + sel + " in the hour before", Origin: l.Label + " " + u, At: end}}, nil
	}
	return []Item{{Source: "loki", Title: fmt.Sprintf("%d lines matching %s", n, sel), Content: b.String(), Origin: l.Label + " " + u, At: end}}, nil
}

// Alertmanager gathers the silences and the other active alerts that
// share the alert's labels.
type Alertmanager struct{ Endpoint }

func (Alertmanager) Name() string { return "alertmanager" }

func (a Alertmanager) Gather(ctx context.Context, q Query) ([]Item, error) {
	var alerts []struct {
		Labels   map[string]string `json:"labels"`
		StartsAt time.Time         `json:"startsAt"`
		Status   struct {
			State string `json:"state"`
		} `json:"status"`
	}
	var filter []string
	for _, k := range []string{"service", "instance", "job", "namespace"} {
		if v := q.Labels[k]; v != "" {
			filter = append(filter, k+"="+strconv.Quote(v))
		}
	}
	u, err := a.get(ctx, "/api/v2/alerts", url.Values{"filter": filter, "active": {"true"}}, &alerts)
	if err != nil {
		return nil, err
	}
	var silences []struct {
		ID        string `json:"id"`
		Comment   string `json:"comment"`
		CreatedBy string `json:"createdBy"`
		EndsAt    string `json:"endsAt"`
		Status    struct {
			State string `json:"state"`
		} `json:"status"`
		Matchers []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"matchers"`
	}
	su, err := a.get(ctx, "/api/v2/silences", nil, &silences)
	if err != nil {
		return nil, err
	}
	now := q.OpenedAt
	var items []Item
	var b strings.Builder
	for _, al := range alerts {
		if al.Labels["alertname"] == q.Labels["alertname"] && q.Labels["alertname"] != "" && sameTarget(al.Labels, q.Labels) {
			continue // the alert itself
		}
		fmt.Fprintf(&b, "- %s %s since %s\n", al.Labels["alertname"], metricName(al.Labels), al.StartsAt.UTC().Format(time.RFC3339))
	}
	if b.Len() > 0 {
		items = append(items, Item{Source: "alertmanager", Title: "other active alerts sharing the labels", Content: b.String(), Origin: a.Label + " " + u, At: now})
	}
	b.Reset()
	for _, s := range silences {
		if s.Status.State != "active" {
			continue
		}
		var ms []string
		for _, m := range s.Matchers {
			ms = append(ms, m.Name+"="+m.Value)
		}
		fmt.Fprintf(&b, "- silence %s by %s until %s (%s): %s\n", s.ID, s.CreatedBy, s.EndsAt, strings.Join(ms, ","), s.Comment)
	}
	if b.Len() > 0 {
		items = append(items, Item{Source: "alertmanager", Title: "active silences", Content: b.String(), Origin: a.Label + " " + su, At: now})
	}
	return items, nil
}

func sameTarget(a, b map[string]string) bool {
	for _, k := range []string{"instance", "service", "job"} {
		if a[k] != b[k] {
			return false
		}
	}
	return true
}

// Grafana gathers the annotations of the window before the incident.
type Grafana struct{ Endpoint }

func (Grafana) Name() string { return "grafana" }

func (g Grafana) Gather(ctx context.Context, q Query) ([]Item, error) {
	end := q.OpenedAt
	var anns []struct {
		Time      int64    `json:"time"`
		Text      string   `json:"text"`
		Tags      []string `json:"tags"`
		Dashboard string   `json:"dashboardUID"`
	}
	u, err := g.get(ctx, "/api/annotations", url.Values{"from": {strconv.FormatInt(end.Add(-q.Window).UnixMilli(), 10)},
		"to": {strconv.FormatInt(end.Add(time.Minute).UnixMilli(), 10)}, "limit": {"20"}}, &anns)
	if err != nil {
		return nil, err
	}
	var items []Item
	for _, a := range anns {
		items = append(items, Item{Source: "grafana", Title: cut(a.Text, 80), Content: a.Text + "\ntags: " + strings.Join(a.Tags, ", "),
			Origin: g.Label + " " + u, At: time.UnixMilli(a.Time).UTC()})
	}
	return items, nil
}
