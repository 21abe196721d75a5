package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// poll calls get until ok holds or 30 s pass.
func pollUntil(t *testing.T, what string, get func() map[string]any, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		v := get()
		if ok(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never happened: %v", what, v)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestResolvedIncidentGetsADraftCitingItsRecords(t *testing.T) {
	e := newE2E(t,
		llmfake.ToolCall("run_command", `{"command":"`+echoHello+`","target":"server"}`),
		llmfake.Text("Restarted the api; latency is back to normal."),
	)
	c := e.c
	f := newHook(t, e.env, c, map[string]any{"provider": "alertmanager"})
	f.post(t, amAlert("{}:{alertname=HighLatency}", "fp-pm", "firing"), bearer(f.secret))
	f.dispatch(t)
	page := pollUntil(t, "the approval of the run", func() map[string]any {
		return c.must(200, "GET", "/api/approvals?status=pending&kind=tool_call", nil).JSON()
	}, func(m map[string]any) bool { items, _ := m["items"].([]any); return len(items) == 1 })
	approval := page["items"].([]any)[0].(map[string]any)
	c.must(200, "POST", "/api/approvals/"+approval["id"].(string)+"/approve", map[string]any{"comment": "go ahead"})
	e.waitTask(t, f.task, func(tk map[string]any) bool { return tk["last_status"] == "completed" })

	incs := incidentsOf(t, c)
	if len(incs) != 1 {
		t.Fatalf("incidents: %v", incs)
	}
	inc := c.must(200, "GET", "/api/incidents/"+incs[0]["id"].(string), nil).JSON()
	incID, sid := inc["id"].(string), inc["session_id"].(string)
	alertEntry := inc["timeline"].([]any)[0].(map[string]any)["id"].(string)
	invented := "approval:01900000-0000-7000-8000-00000000dead"
	e.fake.Add(llmfake.Text("## Summary\n\nLatency on the api was high [incident:" + incID + "] and the agent restarted it [session:" + sid + "].\n\n" +
		"## Impact\n\nunknown\n\n## Timeline\n\n- alert fired [timeline:" + alertEntry + "]\n- restart approved by oncall@example.com [approval:" + approval["id"].(string) + "]\n" +
		"- the database was rebooted [" + invented + "]\n\n## Root cause (as known)\n\nunknown\n\n## Action items\n\n- add a latency runbook\n"))

	spentBefore := spendToday(t, c)
	c.must(200, "POST", "/api/incidents/"+incID+"/resolve", map[string]any{"summary": "restarted the api"})
	// The draft starts in the background after the resolve: until its row is
	// written the postmortem is a 404 (on PostgreSQL that window is wider).
	pm := pollUntil(t, "the draft", func() map[string]any { return c.do("GET", "/api/postmortems/"+incID, nil).JSON() },
		func(m map[string]any) bool { return m["status"] == "draft" })
	md := pm["markdown"].(string)
	for _, want := range []string{"[incident:" + incID + "]", "[approval:" + approval["id"].(string) + "]", "[timeline:" + alertEntry + "]",
		"[unverified citation removed]", "## Sources", "## Action items"} {
		if !strings.Contains(md, want) {
			t.Errorf("draft lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, invented) {
		t.Fatalf("the invented citation survived:\n%s", md)
	}
	if inv := pm["invalid_citations"].([]any); len(inv) != 1 || inv[0] != invented {
		t.Fatalf("invalid citations: %v", pm["invalid_citations"])
	}
	if cited := pm["cited"].([]any); len(cited) != 4 {
		t.Fatalf("cited: %v", cited)
	}
	// The model was given the recorded facts: the command, its output, who approved when.
	var sheet string
	for _, r := range e.fake.Requests() { // the draft's request, wherever it came
		if len(r.Messages) > 0 && strings.HasPrefix(r.Messages[0].Content, "Fact sheet:") {
			sheet = r.Messages[0].Content
		}
	}
	for _, want := range []string{"[approval:" + approval["id"].(string) + "]", "by oncall@example.com at", "go ahead",
		"command: run_command", "command output", "hello", "[session:" + sid + "#", "HighLatency"} {
		if !strings.Contains(sheet, want) {
			t.Errorf("fact sheet lacks %q:\n%s", want, sheet)
		}
	}
	// The draft is a knowledge document a person can edit, then publish.
	doc := c.must(200, "GET", "/api/knowledge/documents/by-name?collection=incidents&name=postmortem-"+incID+".md", nil).JSON()
	if tags, _ := doc["tags"].([]any); len(tags) != 2 || (tags[0] != "draft" && tags[1] != "draft") {
		t.Fatalf("document: %v", doc)
	}
	c.must(200, "PUT", "/api/knowledge/documents/by-name?collection=incidents&name=postmortem-"+incID+".md",
		map[string]any{"content": md + "\nEdited by a person.\n"})
	pub := c.must(200, "POST", "/api/postmortems/"+incID+"/publish", nil).JSON()
	if pub["status"] != "published" || pub["published_by"] == nil || !strings.Contains(pub["markdown"].(string), "Edited by a person.") {
		t.Fatalf("published: %v", pub)
	}
	// The draft's model call counts against the spending caps.
	if after := spendToday(t, c); after <= spentBefore {
		t.Fatalf("spend before the draft %v, after %v", spentBefore, after)
	}
	c.must(409, "POST", "/api/postmortems/"+incID+"/publish", nil)
	c.must(409, "POST", "/api/postmortems/"+incID+"/draft", nil)
	if list := c.must(200, "GET", "/api/postmortems", nil).JSON(); list["total"] != float64(1) {
		t.Fatalf("list: %v", list)
	}
}

func TestPostmortemWithoutModelDraftsFromFacts(t *testing.T) {
	env := newEnv(t)
	owner := env.register("owner@example.com")
	f := newHook(t, env, owner, map[string]any{"provider": "alertmanager"})
	owner.must(200, "PUT", "/api/postmortem-template", map[string]any{"sections": []string{"Summary", "What we saw", "Timeline"}})
	wantValidation(t, owner.do("PUT", "/api/postmortem-template", map[string]any{"sections": []string{"# bad"}}), "body", "sections", 0)
	f.post(t, amAlert("g", "fp", "firing"), bearer(f.secret))
	f.dispatch(t)
	incID := incidentsOf(t, owner)[0]["id"].(string)
	owner.must(200, "POST", "/api/incidents/"+incID+"/resolve", map[string]any{"summary": "went away"})
	// The draft starts in the background after the resolve: until its row is
	// written the postmortem is a 404 (on PostgreSQL that window is wider).
	pm := pollUntil(t, "the draft", func() map[string]any { return owner.do("GET", "/api/postmortems/"+incID, nil).JSON() },
		func(m map[string]any) bool { return m["status"] == "draft" })
	md := pm["markdown"].(string)
	if pm["model"] != "" || !strings.Contains(md, "## What we saw") || !strings.Contains(md, "no model configured") ||
		!strings.Contains(md, "[incident:"+incID+"]") || len(pm["invalid_citations"].([]any)) != 0 {
		t.Fatalf("fallback draft: %v\n%s", pm, md)
	}
}

func spendToday(t *testing.T, c *client) float64 {
	t.Helper()
	b := c.must(200, "GET", "/api/budget", nil).JSON()
	return b["project"].(map[string]any)["spend"].(map[string]any)["today"].(float64)
}
