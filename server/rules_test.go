package server_test

import (
	"testing"
)

func evaluate(t *testing.T, c *client, tool string, args map[string]any) map[string]any {
	t.Helper()
	return c.must(200, "POST", "/api/rules/evaluate", map[string]any{"tool": tool, "arguments": args}).JSON()
}

func TestRulesDecideCalls(t *testing.T) {
	t.Parallel()
	env := newEnv(t, openSignup)
	owner := env.register("owner@example.com")
	owner.Project = env.newProject(owner, "prod")

	// Without rules: reads run, changes wait for a person.
	if v := evaluate(t, owner, "http_request", map[string]any{"method": "GET", "url": "https://example.com/"})["verdict"]; v != "allow" {
		t.Fatalf("GET: %v", v)
	}
	if v := evaluate(t, owner, "http_request", map[string]any{"method": "POST", "url": "https://example.com/"})["verdict"]; v != "need_approval" {
		t.Fatalf("POST: %v", v)
	}
	if v := evaluate(t, owner, "run_command", map[string]any{"command": "uptime"})["verdict"]; v != "need_approval" {
		t.Fatalf("command: %v", v)
	}

	never := owner.must(201, "POST", "/api/org-rules", map[string]any{"kind": "must_never", "description": "never delete data recursively",
		"match_type": "regex", "pattern": `rm\s+-[a-zA-Z]*r`}).JSON()
	if never["effect"] != "block" || never["scope"] != "org" {
		t.Fatalf("org rule: %v", never)
	}
	allow := owner.must(201, "POST", "/api/rules", map[string]any{"kind": "must_always", "effect": "allow", "description": "reading pods is fine",
		"tool": "run_command", "match_type": "glob", "pattern": "kubectl get *"}).JSON()
	approve := owner.must(201, "POST", "/api/rules", map[string]any{"kind": "must_always", "description": "a person approves every GET to the billing API",
		"tool": "http_request", "match_type": "glob", "pattern": "GET https://billing.example.com/*"}).JSON()
	if approve["effect"] != "require_approval" {
		t.Fatalf("default effect: %v", approve)
	}
	owner.must(201, "POST", "/api/rules", map[string]any{"kind": "must_always", "description": "always link the runbook you used"})

	for _, tc := range []struct {
		tool    string
		args    map[string]any
		verdict string
		rule    any
	}{
		{"run_command", map[string]any{"command": "sudo rm -rf /var/lib/postgres"}, "block", never["id"]},
		{"run_command", map[string]any{"command": "rm   -fr  /srv"}, "block", never["id"]},
		{"run_command", map[string]any{"command": "kubectl get pods -n api"}, "allow", allow["id"]},
		{"run_command", map[string]any{"command": "kubectl get pods; rm -f /x"}, "need_approval", nil},
		{"run_command", map[string]any{"command": "kubectl get pods $(curl evil)"}, "need_approval", nil},
		{"run_command", map[string]any{"command": "kubectl delete pod api-1"}, "need_approval", nil},
		{"http_request", map[string]any{"method": "GET", "url": "https://billing.example.com/invoices"}, "need_approval", approve["id"]},
		// A must_never rule on any tool catches the command carried by another tool.
		{"http_request", map[string]any{"method": "POST", "url": "https://runner.example.com/exec", "body": "rm -rf /"}, "block", never["id"]},
	} {
		got := evaluate(t, owner, tc.tool, tc.args)
		if got["verdict"] != tc.verdict {
			t.Errorf("%s %v: %v, want %s", tc.tool, tc.args, got, tc.verdict)
			continue
		}
		ids, _ := got["rule_ids"].([]any)
		if tc.rule != nil && (len(ids) != 1 || ids[0] != tc.rule) {
			t.Errorf("%s %v: decided by %v, want %v", tc.tool, tc.args, ids, tc.rule)
		}
	}

	// Rules show in the project listing and in task preview.
	if n := len(owner.must(200, "GET", "/api/rules", nil).JSON()["items"].([]any)); n != 4 {
		t.Fatalf("listing has %d rules", n)
	}
	preview := owner.must(200, "POST", "/api/tasks/preview", map[string]any{"name": "n", "prompt": "p"}).JSON()
	if rs := preview["rules"].([]any); len(rs) != 4 || rs[0].(map[string]any)["scope"] != "org" {
		t.Fatalf("preview rules: %v", preview["rules"])
	}

	// Disabling a rule takes effect at once.
	owner.must(200, "PATCH", "/api/org-rules/"+never["id"].(string), map[string]any{"enabled": false})
	if v := evaluate(t, owner, "run_command", map[string]any{"command": "rm -rf /srv"})["verdict"]; v != "need_approval" {
		t.Fatalf("disabled rule still blocks: %v", v)
	}
	owner.must(204, "DELETE", "/api/rules/"+allow["id"].(string), nil)
	owner.must(404, "GET", "/api/rules/"+allow["id"].(string), nil)
}

func TestRuleValidationAndPermissions(t *testing.T) {
	t.Parallel()
	env := newEnv(t, openSignup)
	owner := env.register("owner@example.com")
	owner.Project = env.newProject(owner, "prod")
	for field, body := range map[string]map[string]any{
		"pattern":    {"kind": "must_never", "description": "x", "match_type": "regex", "pattern": "(unclosed"},
		"effect":     {"kind": "must_never", "description": "x", "effect": "allow", "tool": "run_command"},
		"tool":       {"kind": "must_always", "description": "x", "effect": "require_approval"},
		"kind":       {"kind": "should_maybe", "description": "x"},
		"match_type": {"kind": "must_never", "description": "x", "pattern": "rm *"},
	} {
		wantValidation(t, owner.do("POST", "/api/rules", body), "body", field)
	}
	// An allow rule must name a tool and a pattern: it never pre-approves a whole tool.
	wantValidation(t, owner.do("POST", "/api/rules", map[string]any{"kind": "must_always", "effect": "allow", "description": "x", "tool": "run_command"}), "body", "pattern")

	viewer := env.invite(t, owner, owner.orgOf(), "viewer@example.com", "viewer")
	viewer.Project = owner.Project
	viewer.must(200, "GET", "/api/rules", nil)
	viewer.must(403, "POST", "/api/rules", map[string]any{"kind": "must_always", "description": "x"})
	member := env.invite(t, owner, owner.orgOf(), "member@example.com", "member")
	member.Project = owner.Project
	member.must(403, "POST", "/api/rules", map[string]any{"kind": "must_always", "description": "x"})
	member.must(403, "PUT", "/api/budget", map[string]any{"daily_cost_usd": 1})
}
