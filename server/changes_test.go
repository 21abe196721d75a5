package server_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// The change feed end to end: GitHub and GitLab deliveries that report a
// change, a generic delivery in the change shape and POST /api/changes all
// land in GET /api/changes (once each), deliveries that report none add
// nothing, a body of another shape is a 422 naming the fields expected, and
// the changes before an incident sit on its timeline.
func TestChangeFeedSources(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	owner := env.register("changes@example.com")
	withProject(t, env, owner)

	gh := newHook(t, env, owner, map[string]any{"provider": "github"})
	ghPost := func(event, body string) {
		t.Helper()
		h := http.Header{"X-Github-Event": {event}, "X-Github-Delivery": {fmt.Sprintf("d-%d", time.Now().UnixNano())},
			"X-Hub-Signature-256": {"sha256=" + hmacSHA256Hex([]byte(gh.secret), []byte(body))}}
		if r := gh.post(t, []byte(body), h); r.Status != 202 {
			t.Fatalf("github %s: %d %s", event, r.Status, r.Body)
		}
	}
	repo := `"repository":{"name":"shop","full_name":"acme/shop","html_url":"https://github.com/acme/shop","default_branch":"main"},"sender":{"login":"octocat"}`
	ghPost("deployment_status", `{"action":"created","deployment_status":{"id":77,"state":"success","environment":"production","target_url":"https://ci/77","created_at":"2026-01-02T10:00:00Z"},
		"deployment":{"id":5,"sha":"a1b2c3d4e5f6","ref":"main","environment":"production"},`+repo+`}`)
	ghPost("deployment_status", `{"action":"created","deployment_status":{"id":78,"state":"in_progress","environment":"production"},"deployment":{"id":5,"sha":"a1b2c3d4e5f6"},`+repo+`}`)
	ghPost("push", `{"ref":"refs/heads/main","after":"ffee00112233","compare":"https://github.com/acme/shop/compare/x","head_commit":{"message":"raise pool size\n\nbody","timestamp":"2026-01-02T09:00:00Z"},`+repo+`}`)
	ghPost("push", `{"ref":"refs/heads/feature","after":"0011","head_commit":{"message":"wip"},`+repo+`}`)
	ghPost("release", `{"action":"published","release":{"id":9,"tag_name":"v2.0.0","name":"v2.0.0","html_url":"https://github.com/acme/shop/releases/v2.0.0","published_at":"2026-01-02T08:00:00Z"},`+repo+`}`)
	ghPost("issues", `{"action":"opened","issue":{"number":1,"title":"bug"},`+repo+`}`)

	gl := newHook(t, env, owner, map[string]any{"provider": "gitlab"})
	glPost := func(event, body string) {
		t.Helper()
		if r := gl.post(t, []byte(body), http.Header{"X-Gitlab-Event": {event}, "X-Gitlab-Token": {gl.secret}}); r.Status != 202 {
			t.Fatalf("gitlab %s: %d %s", event, r.Status, r.Body)
		}
	}
	glProj := `"project":{"name":"billing","path_with_namespace":"acme/billing","web_url":"https://gitlab/acme/billing","default_branch":"main"},"user":{"username":"dev1"}`
	glPost("Pipeline Hook", `{"object_kind":"pipeline","object_attributes":{"id":31,"ref":"main","tag":false,"sha":"abc","status":"success","finished_at":"2026-01-02 07:00:00 UTC"},`+glProj+`}`)
	glPost("Pipeline Hook", `{"object_kind":"pipeline","object_attributes":{"id":32,"ref":"topic","status":"success"},`+glProj+`}`)
	glPost("Tag Push Hook", `{"object_kind":"tag_push","ref":"refs/tags/v1.4","after":"9f9f9f","checkout_sha":"9f9f9f","user_username":"dev1",`+glProj+`}`)
	glPost("Deployment Hook", `{"object_kind":"deployment","status":"success","deployment_id":12,"environment":"production","short_sha":"9f9f9f","deployable_url":"https://gitlab/jobs/1",`+glProj+`}`)

	gen := newHook(t, env, owner, map[string]any{"provider": "generic", "scheme": "bearer"})
	if r := gen.post(t, []byte(`{"change":{"title":"argocd synced checkout to 4f2a","kind":"rollout","service":"checkout","labels":{"app":"checkout"}}}`), bearer(gen.secret)); r.Status != 202 {
		t.Fatalf("generic: %d %s", r.Status, r.Body)
	}

	occurred := time.Now().UTC().Add(-10 * time.Minute).Format(time.RFC3339)
	created := owner.must(201, "POST", "/api/changes", map[string]any{"title": "raise max_connections to 500", "kind": "config", "service": "db",
		"environment": "production", "labels": map[string]string{"team": "data"}, "author": "ops@example.com", "occurred_at": occurred, "external_id": "chg-1"}).JSON()
	if created["status"] != "created" || created["source"] != "api" {
		t.Fatalf("created: %v", created)
	}
	again := owner.must(200, "POST", "/api/changes", map[string]any{"title": "raise max_connections to 500", "external_id": "chg-1"}).JSON()
	if again["status"] != "duplicate" || again["id"] != created["id"] {
		t.Fatalf("a second post of chg-1 was stored again: %v", again)
	}

	r := owner.do("POST", "/api/changes", map[string]any{"app": "checkout", "revision": "4f2a"})
	if r.Status != 422 || !strings.Contains(string(r.Body), "expected title, kind, service") || !strings.Contains(string(r.Body), "app, revision") {
		t.Fatalf("unknown shape: %d %s", r.Status, r.Body)
	}
	wantValidation(t, owner.do("POST", "/api/changes", map[string]any{"kind": "deploy"}), "body", "title")

	list := func(q string) []map[string]any {
		t.Helper()
		var page struct {
			Items []map[string]any `json:"items"`
			Total int              `json:"total"`
		}
		owner.must(200, "GET", "/api/changes"+q, nil).decode(t, &page)
		if page.Total != len(page.Items) {
			t.Fatalf("total %d, items %d", page.Total, len(page.Items))
		}
		return page.Items
	}
	all := list("?limit=200")
	bySource := map[string][]string{}
	for _, c := range all {
		bySource[c["source"].(string)] = append(bySource[c["source"].(string)], c["kind"].(string)+": "+c["title"].(string))
	}
	want := map[string][]string{
		"github":  {"deploy: Deploy acme/shop@a1b2c3d to production: success", "push: Push to acme/shop main (ffee001): raise pool size", "release: Release v2.0.0 of acme/shop"},
		"gitlab":  {"pipeline: Pipeline 31 on acme/billing main: success", "tag: Tag v1.4 on acme/billing", "deploy: Deploy acme/billing@9f9f9f to production: success"},
		"generic": {"rollout: argocd synced checkout to 4f2a"},
		"api":     {"config: raise max_connections to 500"},
	}
	for src, titles := range want {
		got := strings.Join(bySource[src], "\n")
		for _, w := range titles {
			if !strings.Contains(got, w) {
				t.Errorf("source %s: missing %q in\n%s", src, w, got)
			}
		}
		if len(bySource[src]) != len(titles) {
			t.Errorf("source %s: got %d changes, want %d:\n%s", src, len(bySource[src]), len(titles), got)
		}
	}
	for i := 1; i < len(all); i++ {
		if all[i-1]["occurred_at"].(string) < all[i]["occurred_at"].(string) {
			t.Fatalf("not newest first: %v before %v", all[i-1]["occurred_at"], all[i]["occurred_at"])
		}
	}
	if got := list("?service=db&label=team=data"); len(got) != 1 || got[0]["id"] != created["id"] {
		t.Fatalf("service and label filter: %v", got)
	}
	if got := list("?label=team=other"); len(got) != 0 {
		t.Fatalf("label filter matched %v", got)
	}
	if got := list("?source=gitlab"); len(got) != 3 {
		t.Fatalf("source filter: %d", len(got))
	}
	if got := list("?since=" + url.QueryEscape(time.Now().UTC().Add(-time.Hour).Format(time.RFC3339))); len(got) != 4 { // generic, api (10 min ago), gitlab deploy and tag (no time: now)
		t.Fatalf("since filter: %d %v", len(got), got)
	}
	wantValidation(t, owner.do("GET", "/api/changes?label=nokey", nil), "query", "label")
	wantValidation(t, owner.do("GET", "/api/changes?limit=201", nil), "query", "limit")

	// An incident opened now shows the changes of the hour before it.
	am := newHook(t, env, owner, map[string]any{"provider": "alertmanager"})
	if r := am.post(t, amAlert("g1", "fp1", "firing"), bearer(am.secret)); r.Status != 202 {
		t.Fatalf("alert: %d %s", r.Status, r.Body)
	}
	am.dispatch(t)
	incs := owner.must(200, "GET", "/api/incidents", nil).JSON()["items"].([]any)
	if len(incs) != 1 {
		t.Fatalf("incidents: %v", incs)
	}
	inc := owner.must(200, "GET", "/api/incidents/"+incs[0].(map[string]any)["id"].(string), nil).JSON()
	var kinds, texts []string
	for _, e := range inc["timeline"].([]any) {
		kinds = append(kinds, e.(map[string]any)["kind"].(string))
		texts = append(texts, e.(map[string]any)["text"].(string))
	}
	joined := strings.Join(texts, "\n")
	if !strings.Contains(joined, "api config: raise max_connections to 500") || !strings.Contains(joined, "generic rollout: argocd synced") ||
		strings.Contains(joined, "Release v2.0.0") { // occurred on 2 January: not the hour before
		t.Fatalf("incident timeline %v:\n%s", kinds, joined)
	}
	if kinds[0] != "change" {
		t.Fatalf("the change ten minutes before should come first: %v", kinds)
	}
}

// A flood of POST /api/changes is refused with 429 and Retry-After, as a
// webhook's deliveries are past its rate limit.
func TestChangeFeedRateLimited(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.UseClock() // the minute does not pass however slowly the machine posts
	owner := env.register("flood@example.com")
	withProject(t, env, owner)
	for i := 0; i < 600; i++ {
		if r := owner.do("POST", "/api/changes", map[string]any{"title": fmt.Sprintf("deploy %d", i)}); r.Status != 201 {
			t.Fatalf("post %d: %d %s", i, r.Status, r.Body)
		}
	}
	r := owner.do("POST", "/api/changes", map[string]any{"title": "one too many"})
	if r.Status != 429 || r.Header.Get("Retry-After") == "" {
		t.Fatalf("601st post: %d %s (Retry-After %q)", r.Status, r.Body, r.Header.Get("Retry-After"))
	}
	env.Advance(2 * time.Minute)
	owner.must(201, "POST", "/api/changes", map[string]any{"title": "the next minute"})
}
