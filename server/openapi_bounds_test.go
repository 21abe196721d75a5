package server_test

import (
	"fmt"
	"math"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/store"
)

// bodyLocs returns the top-level body fields a 422 reports.
func bodyLocs(r *resp) map[string]bool { return missingLocs(r, "body") }

// bounds are a numeric property's documented limits: minimum and maximum,
// directly or in the branch of a oneOf beside {"const": 0} (0 then means
// "not given").
type bounds struct {
	min, max  *float64
	zeroOK    bool
	isInteger bool
}

func numericBounds(sch map[string]any) (bounds, bool) {
	if alts, ok := sch["anyOf"].([]any); ok && len(alts) > 0 { // nullable: the first branch is the value
		sch, _ = alts[0].(map[string]any)
	}
	var b bounds
	switch sch["type"] {
	case "integer":
		b.isInteger = true
	case "number":
	default:
		return b, false
	}
	from := sch
	if alts, ok := sch["oneOf"].([]any); ok {
		for _, a := range alts {
			m := a.(map[string]any)
			if c, ok := m["const"]; ok && c == 0.0 {
				b.zeroOK = true
			} else {
				from = m
			}
		}
	}
	if v, ok := from["minimum"].(float64); ok {
		b.min = &v
	}
	if v, ok := from["maximum"].(float64); ok {
		b.max = &v
	}
	return b, b.min != nil || b.max != nil
}

// probes are values the document allows (inside) and refuses (outside).
func (b bounds) probes() (inside, outside []float64) {
	step := 1.0
	if !b.isInteger {
		step = 0.001
	}
	if b.min != nil {
		inside = append(inside, *b.min)
		if !(b.zeroOK && *b.min-step <= 0 && *b.min-step > -step) {
			outside = append(outside, *b.min-step)
		}
	}
	if b.max != nil {
		inside = append(inside, *b.max)
		outside = append(outside, *b.max+step)
	}
	switch {
	case b.min != nil && b.max != nil:
		mid := (*b.min + *b.max) / 2
		if b.isInteger {
			mid = math.Floor(mid)
		}
		inside = append(inside, mid, math.Min(*b.min+step, *b.max))
	case b.min != nil:
		inside = append(inside, *b.min+step)
	case b.max != nil:
		inside = append(inside, *b.max-step)
	}
	if b.zeroOK {
		inside = append(inside, 0)
	}
	return inside, outside
}

// sample is a value the schema accepts, for the required fields beside the
// one probed.
func sample(schemas map[string]any, sch map[string]any) any {
	if ref, ok := sch["$ref"].(string); ok {
		sch = schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
	}
	if alts, ok := sch["anyOf"].([]any); ok && len(alts) > 0 {
		sch = alts[0].(map[string]any)
	}
	if b, ok := numericBounds(sch); ok {
		if b.zeroOK {
			return 0
		}
		if b.min != nil {
			return *b.min
		}
		return *b.max
	}
	switch sch["type"] {
	case "string":
		if e, ok := sch["enum"].([]any); ok && len(e) > 0 {
			return e[0]
		}
		switch sch["format"] {
		case "email":
			return "probe@example.com"
		case "uuid":
			return store.NewID()
		case "date-time":
			return time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		}
		n, _ := sch["minLength"].(float64)
		return "probe" + strings.Repeat("x", int(n))
	case "integer", "number":
		return 0
	case "boolean":
		return false
	case "array":
		n, _ := sch["minItems"].(float64)
		items, _ := sch["items"].(map[string]any)
		out := []any{}
		for range int(n) {
			out = append(out, sample(schemas, items))
		}
		return out
	case "object":
		out := map[string]any{}
		props, _ := sch["properties"].(map[string]any)
		req, _ := sch["required"].([]any)
		for _, n := range req {
			if p, ok := props[n.(string)].(map[string]any); ok {
				out[n.(string)] = sample(schemas, p)
			}
		}
		return out
	}
	return nil
}

// Every numeric bound the OpenAPI document states for a request body is the
// bound the server applies: each JSON body field of the route table with a
// documented minimum or maximum is sent at the bounds, inside them and just
// outside them, beside sample values of the required fields. A value the
// document allows must not be refused at that field, and a value it refuses
// must be; so is every numeric query parameter of a GET route. (A route that
// answers 404 or 403 first is skipped: nothing ran.)
func TestOpenAPIBoundsMatchValidator(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	owner := env.register("bounds@example.com")
	withProject(t, env, owner)
	doc := owner.must(200, "GET", "/api/openapi.json", nil).JSON()
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	var paths []string
	for p := range doc["paths"].(map[string]any) {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	probed := 0
	for _, path := range paths {
		if strings.HasPrefix(path, "/api/mcp") || strings.HasPrefix(path, "/api/auth/") {
			continue // MCP transports; sign-in flows answer by their own RFCs and would end the session
		}
		concrete := pathParam.ReplaceAllStringFunc(path, func(p string) string {
			if strings.HasSuffix(p, "_id}") {
				return store.NewID()
			}
			return "PROBE_NAME"
		})
		ops := doc["paths"].(map[string]any)[path].(map[string]any)
		for method, raw := range ops {
			op := raw.(map[string]any)
			if method == "get" {
				params, _ := op["parameters"].([]any)
				for _, p := range params {
					pm := p.(map[string]any)
					b, ok := numericBounds(pm["schema"].(map[string]any))
					if pm["in"] != "query" || !ok {
						continue
					}
					name := pm["name"].(string)
					inside, outside := b.probes()
					for _, v := range append(inside, outside...) {
						q := url.Values{name: {fmt.Sprint(v)}}
						if name != "q" {
							q.Set("q", "probe") // routes that need a search text
						}
						r := owner.do("GET", concrete+"?"+q.Encode(), nil)
						if r.Status == 404 || r.Status == 403 {
							continue
						}
						refused := missingLocs(r, "query")[name]
						if in := contains(fmtFloats(inside), fmt.Sprint(v)); in == refused {
							t.Errorf("GET %s: query %s=%v (documented inside: %v), the server answered %d: %s", path, name, v, in, r.Status, r.Body)
						}
						probed++
					}
				}
			}
			rb, ok := op["requestBody"].(map[string]any)
			if !ok {
				continue
			}
			js, ok := rb["content"].(map[string]any)["application/json"].(map[string]any)
			if !ok {
				continue
			}
			sch := js["schema"].(map[string]any)
			if ref, ok := sch["$ref"].(string); ok {
				sch = schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
			}
			props, _ := sch["properties"].(map[string]any)
			var names []string
			for n := range props {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, name := range names {
				b, ok := numericBounds(props[name].(map[string]any))
				if !ok {
					continue
				}
				inside, outside := b.probes()
				for _, v := range append(inside, outside...) {
					body := sample(schemas, sch).(map[string]any)
					body[name] = v
					r := owner.do(strings.ToUpper(method), concrete, body)
					if r.Status == 404 || r.Status == 403 || r.Status == 409 {
						continue
					}
					refused := bodyLocs(r)[name]
					in := contains(fmtFloats(inside), fmt.Sprint(v))
					switch {
					case in && refused:
						t.Errorf("%s %s: %s=%v is inside the documented bounds, the server refuses it: %s", strings.ToUpper(method), path, name, v, r.Body)
					case !in && !refused:
						t.Errorf("%s %s: %s=%v is outside the documented bounds, the server answered %d", strings.ToUpper(method), path, name, v, r.Status)
					}
					probed++
				}
			}
		}
	}
	if probed < 40 {
		t.Fatalf("only %d bound probes were made; the walk lost the route table", probed)
	}
}

func fmtFloats(vs []float64) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = fmt.Sprint(v)
	}
	return out
}

// GET /api/knowledge/search needs q or tag: the operation says so in its
// description and in x-required-one-of, and the server answers as it says.
func TestOpenAPIKnowledgeSearchDocumentsQOrTag(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := env.register("search@example.com")
	withProject(t, env, c)
	op := c.must(200, "GET", "/api/openapi.json", nil).JSON()["paths"].(map[string]any)["/api/knowledge/search"].(map[string]any)["get"].(map[string]any)
	sets, _ := op["x-required-one-of"].([]any)
	if len(sets) != 1 || fmt.Sprint(sets[0]) != "[q tag]" {
		t.Fatalf("x-required-one-of: %v, want [[q tag]]", op["x-required-one-of"])
	}
	if d, _ := op["description"].(string); !strings.Contains(d, "q or tag") || !strings.Contains(d, "422") {
		t.Fatalf("description %q does not state the rule", d)
	}
	if r := c.do("GET", "/api/knowledge/search", nil); r.Status != 422 {
		t.Fatalf("without q and tag: got %d, want 422", r.Status)
	}
	for _, q := range []string{"?q=disk", "?tag=db", "?q=disk&tag=db"} {
		if r := c.do("GET", "/api/knowledge/search"+q, nil); r.Status != 200 {
			t.Fatalf("search%s: got %d, want 200", q, r.Status)
		}
	}
}
