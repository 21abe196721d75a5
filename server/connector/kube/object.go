package kube

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// obj is one Kubernetes object as decoded JSON. The tools read few fields
// of many kinds, so paths into the document beat a Go type per kind.
type obj map[string]any

func (o obj) path(keys ...string) any {
	var cur any = map[string]any(o)
	for _, k := range keys {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	return cur
}

func (o obj) str(keys ...string) string {
	switch v := o.path(keys...).(type) {
	case string:
		return v
	case float64:
		return fmt.Sprintf("%g", v)
	case bool:
		return fmt.Sprintf("%t", v)
	}
	return ""
}

func (o obj) num(keys ...string) int64 {
	if v, ok := o.path(keys...).(float64); ok {
		return int64(v)
	}
	return 0
}

func (o obj) list(keys ...string) []obj {
	arr, _ := o.path(keys...).([]any)
	out := make([]obj, 0, len(arr))
	for _, it := range arr {
		if m, ok := it.(map[string]any); ok {
			out = append(out, obj(m))
		}
	}
	return out
}

func (o obj) strMap(keys ...string) map[string]string {
	m, _ := o.path(keys...).(map[string]any)
	out := make(map[string]string, len(m))
	for k, v := range m {
		s, _ := v.(string)
		out[k] = s
	}
	return out
}

func (o obj) name() string      { return o.str("metadata", "name") }
func (o obj) namespace() string { return o.str("metadata", "namespace") }

// age is how long ago a timestamp was, kubectl-style.
func age(ts string, now time.Time) string {
	t, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return "0s"
	case d < 2*time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < 3*time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 72*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// lastAppliedKey holds a copy of what was applied: for a Secret, its values.
const lastAppliedKey = "kubectl.kubernetes.io/last-applied-configuration"

// scrub drops what no tool output should carry: managed fields, the
// last-applied copy, and every value of a Secret (its names and keys stay).
func scrub(k kind, o obj) obj {
	if md, ok := o["metadata"].(map[string]any); ok {
		delete(md, "managedFields")
		if an, ok := md["annotations"].(map[string]any); ok {
			delete(an, lastAppliedKey)
		}
	}
	if k.Name == "secrets" {
		return secretShape(o)
	}
	return o
}

// secretShape is a Secret without values: name, namespace, type, keys.
func secretShape(o obj) obj {
	keys := map[string]bool{}
	for _, f := range []string{"data", "stringData"} {
		for key := range o.strMap(f) {
			keys[key] = true
		}
	}
	names := make([]string, 0, len(keys))
	for key := range keys {
		names = append(names, key)
	}
	sort.Strings(names)
	md := obj{"name": o.name(), "namespace": o.namespace(), "creationTimestamp": o.str("metadata", "creationTimestamp"),
		"resourceVersion": o.str("metadata", "resourceVersion")}
	if l := o.strMap("metadata", "labels"); len(l) > 0 {
		md["labels"] = l
	}
	return obj{"kind": "Secret", "metadata": map[string]any(md), "type": o.str("type"), "keys": names,
		"note": "values are never read out by opsagent"}
}

// secretValues are a Secret's decoded values, for masking only.
func secretValues(o obj) []string {
	var out []string
	for _, v := range o.strMap("data") {
		if b, err := decodeB64(v); err == nil {
			out = append(out, string(b))
		}
	}
	for _, v := range o.strMap("stringData") {
		out = append(out, v)
	}
	return out
}

func pretty(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// table renders rows under a header, columns padded.
func table(header []string, rows [][]string) string {
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = len(h)
	}
	for _, r := range rows {
		for i, c := range r {
			if i < len(widths) && len(c) > widths[i] {
				widths[i] = min(len(c), 80)
			}
		}
	}
	var b strings.Builder
	line := func(cells []string) {
		for i, c := range cells {
			if len(c) > 80 {
				c = c[:77] + "..."
			}
			if i == len(cells)-1 {
				b.WriteString(c)
			} else {
				fmt.Fprintf(&b, "%-*s  ", widths[i], c)
			}
		}
		b.WriteString("\n")
	}
	line(header)
	for _, r := range rows {
		line(r)
	}
	return b.String()
}
