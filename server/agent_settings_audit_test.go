package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// Changing a project's own instructions through the API writes one audit
// entry naming who changed them and what changed (before and after), with
// the project's secret values masked; and the next run's system prompt
// carries them after the platform's method.
func TestAgentInstructionsChangeIsAudited(t *testing.T) {
	t.Parallel()
	fake := llmfake.New(t, llmfake.Text("ok"))
	env := newEnv(t, withLLM(fake))
	c := env.register("owner@example.com")
	withProject(t, env, c)
	me := c.must(200, "GET", "/api/auth/me", nil).JSON()
	userID, _ := me["id"].(string)
	if userID == "" {
		t.Fatalf("me: %v", me)
	}
	c.must(200, "PUT", "/api/secrets/DEPLOY_TOKEN", map[string]any{"value": "tok-9f8e7d6c5b4a"})

	c.must(200, "PUT", "/api/agent-settings", map[string]any{"instructions": "Prefer the read replica.", "evidence_budget_tokens": 4000})
	c.must(200, "PUT", "/api/agent-settings", map[string]any{
		"instructions": "Prefer the read replica. Deploys go through ArgoCD with token tok-9f8e7d6c5b4a.", "evidence_budget_tokens": 4000})

	var page struct {
		Items []struct {
			ActorType   string         `json:"actor_type"`
			ActorUserID *string        `json:"actor_user_id"`
			ProjectID   *string        `json:"project_id"`
			Action      string         `json:"action"`
			Outcome     string         `json:"outcome"`
			TargetType  string         `json:"target_type"`
			TargetID    string         `json:"target_id"`
			Detail      map[string]any `json:"detail"`
		} `json:"items"`
		Total int `json:"total"`
	}
	r := c.must(200, "GET", "/api/audit-logs?action=project.agent_settings_changed", nil)
	r.decode(t, &page)
	if page.Total != 2 || len(page.Items) != 2 {
		t.Fatalf("want two agent settings changes audited, got %d: %s", page.Total, r.Body)
	}
	if strings.Contains(string(r.Body), "tok-9f8e7d6c5b4a") {
		t.Fatalf("the audit entry carries the secret value: %s", r.Body)
	}
	last, first := page.Items[0], page.Items[1] // newest first
	if last.ActorType != "user" || last.ActorUserID == nil || *last.ActorUserID != userID || last.Outcome != "success" ||
		last.TargetType != "project" || last.TargetID != c.Project || last.ProjectID == nil || *last.ProjectID != c.Project {
		b, _ := json.Marshal(last)
		t.Fatalf("who and where: %s (want user %s, project %s)", b, userID, c.Project)
	}
	if first.Detail["instructions_before"] != "" || first.Detail["instructions_after"] != "Prefer the read replica." ||
		first.Detail["evidence_budget_before"] != float64(0) || first.Detail["evidence_budget_after"] != float64(4000) {
		t.Fatalf("first change's detail: %v", first.Detail)
	}
	after, _ := last.Detail["instructions_after"].(string)
	if last.Detail["instructions_before"] != "Prefer the read replica." ||
		!strings.HasPrefix(after, "Prefer the read replica. Deploys go through ArgoCD with token ") || strings.Contains(after, "tok-9f8e7d6c5b4a") {
		t.Fatalf("second change's detail: %v", last.Detail)
	}

	// The instructions reach the model after the platform's method.
	_, evs := c.stream("POST", "/api/chat", map[string]any{"message": "check the disk"}, 0, nil)
	if len(evs) == 0 {
		t.Fatal("no chat events")
	}
	sys := fake.Requests()[0].System
	method, own := strings.Index(sys, "Check what changed"), strings.Index(sys, "The project's own instructions")
	if method < 0 || own < method || !strings.Contains(sys[own:], "Prefer the read replica.") {
		t.Fatalf("the system prompt lacks the method followed by the project's instructions:\n%s", sys)
	}
}
