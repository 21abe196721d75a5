package server_test

import (
	"net/url"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/store"
)

var pathParam = regexp.MustCompile(`\{[a-z_]+\}`)

// missingLocs returns the names at loc [where, name] that a 422 reports.
func missingLocs(r *resp, where string) map[string]bool {
	out := map[string]bool{}
	if r.Status != 422 {
		return out
	}
	var v struct {
		Detail []struct {
			Loc  []any  `json:"loc"`
			Type string `json:"type"`
		} `json:"detail"`
	}
	if err := decodeJSON(strings.NewReader(string(r.Body)), &v); err != nil {
		return out
	}
	for _, d := range v.Detail {
		if len(d.Loc) == 2 && d.Loc[0] == where {
			if n, ok := d.Loc[1].(string); ok {
				out[n] = true
			}
		}
	}
	return out
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Every route of the table, as its OpenAPI document describes it, is asked
// without its optional inputs: what the document calls optional must not
// be refused as missing, and what it calls required must be. Query
// parameters are checked on every GET route; bodies on every route whose
// body has required fields (sent as {}: nothing runs).
func TestOpenAPIRequiredMatchesValidator(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	owner := env.register("owner@example.com")
	withProject(t, env, owner)
	doc := owner.must(200, "GET", "/api/openapi.json", nil).JSON()
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	checked := 0
	for path, ops := range doc["paths"].(map[string]any) {
		if strings.HasPrefix(path, "/api/mcp") {
			continue // MCP transports, not REST routes
		}
		concrete := pathParam.ReplaceAllStringFunc(path, func(p string) string {
			if strings.HasSuffix(p, "_id}") {
				return store.NewID()
			}
			return "PROBE_NAME"
		})
		for method, raw := range ops.(map[string]any) {
			op := raw.(map[string]any)
			var required []string
			without := map[string]string{}
			params, _ := op["parameters"].([]any)
			for _, p := range params {
				pm := p.(map[string]any)
				if pm["in"] != "query" {
					continue
				}
				if pm["required"] == true {
					required = append(required, pm["name"].(string))
				}
				if alt, ok := pm["x-required-without"].(string); ok {
					without[pm["name"].(string)] = alt
				}
			}
			hasQuery := len(params) > 0
			if method == "get" && hasQuery {
				r := owner.do("GET", concrete, nil)
				if r.Status == 404 && strings.Contains(path, "{") {
					continue // the lookup answered first; nothing to compare
				}
				got := missingLocs(r, "query")
				for name := range got {
					if _, cond := without[name]; !cond && !contains(required, name) {
						t.Errorf("GET %s: the server requires query %q, OpenAPI says optional", path, name)
					}
				}
				for _, name := range required {
					if !got[name] {
						t.Errorf("GET %s: OpenAPI says query %q is required, the server answered %d without it", path, name, r.Status)
					}
				}
				for name, alt := range without {
					if !got[name] {
						t.Errorf("GET %s: query %q is required unless %s, the server answered %d without both", path, name, alt, r.Status)
					}
					r := owner.do("GET", concrete+"?"+url.Values{alt: {"x"}}.Encode(), nil)
					if missingLocs(r, "query")[name] {
						t.Errorf("GET %s: query %q refused although %s was given", path, name, alt)
					}
				}
				checked++
			}
			rb, ok := op["requestBody"].(map[string]any)
			if !ok {
				continue
			}
			content := rb["content"].(map[string]any)
			js, ok := content["application/json"].(map[string]any)
			if !ok {
				continue
			}
			sch := js["schema"].(map[string]any)
			if ref, ok := sch["$ref"].(string); ok {
				sch = schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
			}
			req, _ := sch["required"].([]any)
			if len(req) == 0 || path == "/api/auth/device-token" { // RFC 8628 answers its errors with 400
				continue
			}
			want := map[string]bool{}
			for _, n := range req {
				want[n.(string)] = true
			}
			r := owner.do(strings.ToUpper(method), concrete, map[string]any{})
			if r.Status == 404 && strings.Contains(path, "{") {
				continue
			}
			if len(missingLocs(r, "query")) > 0 || len(missingLocs(r, "path")) > 0 {
				continue // refused before the body was read
			}
			if got := missingLocs(r, "body"); strings.Join(keys(got), ",") != strings.Join(keys(want), ",") {
				t.Errorf("%s %s with {}: the server reports missing %v (status %d), OpenAPI requires %v", strings.ToUpper(method), path, keys(got), r.Status, keys(want))
			}
			checked++
		}
	}
	if checked < 20 {
		t.Fatalf("only %d operations were compared; the walk lost the route table", checked)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
