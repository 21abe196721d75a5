package server_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// Every integration kind's `tools` names exactly the tools the model is
// offered once an integration of that kind is enabled: read-only queries and
// approval-gated changes alike. The kinds come from the served contract, so
// a kind added later is checked too.
func TestIntegrationToolsAreTheToolsTheModelIsOffered(t *testing.T) {
	upstream := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(upstream.Close)
	e := newE2E(t)
	doc := e.c.must(200, "GET", "/api/openapi.json", nil).JSON()
	kind := doc["components"].(map[string]any)["schemas"].(map[string]any)["IntegrationCreate"].(map[string]any)["properties"].(map[string]any)["kind"].(map[string]any)
	kinds, _ := kind["enum"].([]any)
	if len(kinds) == 0 {
		t.Fatalf("IntegrationCreate.kind documents no enum: %v", kind)
	}
	offered := func() []string {
		t.Helper()
		e.fake.Add(llmfake.Text("ok"))
		e.chat(t, "which tools do you have?")
		reqs := e.fake.Requests()
		return reqs[len(reqs)-1].Tools
	}
	base := offered()
	for _, k := range kinds {
		x := e.c.must(201, "POST", "/api/integrations", map[string]any{"kind": k, "name": "only-" + k.(string), "base_url": upstream.URL}).JSON()
		var listed []string
		for _, name := range x["tools"].([]any) {
			listed = append(listed, name.(string))
		}
		var added []string
		for _, name := range offered() {
			if !slices.Contains(base, name) {
				added = append(added, name)
			}
		}
		slices.Sort(listed)
		slices.Sort(added)
		if !slices.Equal(listed, added) {
			t.Errorf("%s integration: tools %v, but the model is offered %v for it", k, listed, added)
		}
		e.c.must(204, "DELETE", "/api/integrations/"+x["id"].(string), nil)
	}
}
