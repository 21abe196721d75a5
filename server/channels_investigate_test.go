package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
	"github.com/opsagent/opsagent/store"
)

// "investigate <incident id>" sent to the bot in a Slack channel starts the
// console's investigation: the model's first request holds the fenced
// evidence pack, the answer streams into the thread and the finding is
// posted there. An unknown incident, another project's incident or
// something that is not an id gets a reply and starts nothing.
func TestSlackInvestigateCommandStartsAnInvestigation(t *testing.T) {
	ce := newChannelEnv(t,
		llmfake.Text("Alert run: looked, nothing to add."),
		llmfake.Text("Other project's alert run: nothing to add."),
	)
	env, owner := ce.env, ce.owner
	chID := ce.slackChannel(t, nil)
	ce.linkSlack(t, owner, chID, "U061F7AUR")

	// An incident in the channel's project, and one in another project of the same org.
	incidentOf := func(c *client, group string) string {
		t.Helper()
		h := newHook(t, env, c, map[string]any{"provider": "alertmanager"})
		if c == owner {
			// The alert's task posts to another conversation: an investigation
			// asked for in a thread still answers in that thread.
			c.must(200, "PUT", "/api/tasks/"+h.task+"/channel", map[string]any{"channel_id": chID, "conversation": "C0INCIDENT"})
		}
		if r := h.post(t, amAlert(group, "fp-"+group, "firing"), bearer(h.secret)); r.Status != 202 {
			t.Fatalf("alert: %d %s", r.Status, r.Body)
		}
		h.dispatch(t)
		id := c.must(200, "GET", "/api/incidents", nil).JSON()["items"].([]any)[0].(map[string]any)["id"].(string)
		pollUntil(t, "the alert run's end", func() map[string]any { return c.must(200, "GET", "/api/incidents/"+id, nil).JSON() },
			func(m map[string]any) bool { return m["latest_finding"] != nil })
		return id
	}
	owner.must(200, "PUT", "/api/secrets/SHOP_TOKEN", map[string]any{"value": "s3cr3t-token"})
	inc := incidentOf(owner, "g-chat")
	u, err := env.DB.FindUserByEmail(context.Background(), owner.Email)
	if err != nil {
		t.Fatal(err)
	}
	other := &store.Project{OrgID: u.CurrentOrgID, Name: "staging"}
	if err := env.DB.CreateProject(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	oc := *owner
	oc.Project = other.ID
	otherInc := incidentOf(&oc, "g-other")

	mention := func(n int, text string) {
		t.Helper()
		body := fixture(t, "slack/app_mention.json", map[string]any{"event_id": "EvInv" + string(rune('A'+n)),
			"event.ts": "1515449700.00010" + string(rune('0'+n)), "event.text": "<@U0LAN0Z89> " + text})
		if r := slackPost(env, chID, body, time.Now(), "application/json", slackSecret, 0); r.Status != 200 {
			t.Fatalf("%q: %d %s", text, r.Status, r.Body)
		}
	}
	inThread := func(n int, subs ...string) func(chatCall) bool {
		return func(c chatCall) bool {
			return c.Method == "chat.postMessage" && c.Form.Get("thread_ts") == "1515449700.00010"+string(rune('0'+n)) && containsAll(c.text(), subs...)
		}
	}
	sessions := func() int {
		return len(owner.must(200, "GET", "/api/sessions/index?source=slack", nil).JSON()["items"].([]any))
	}
	before, sessionsBefore := len(ce.fake.Requests()), sessions()

	// Refusals: nothing is started, and each says why.
	mention(1, "investigate 01a236c8-0000-7000-8000-000000000000")
	ce.slack.waitFor("the unknown incident's reply", inThread(1, "No incident 01a236c8-0000-7000-8000-000000000000 in this channel's project", "nothing was started"))
	mention(2, "investigate "+otherInc)
	ce.slack.waitFor("the other project's incident's reply", inThread(2, "No incident "+otherInc+" in this channel's project"))
	mention(3, "investigate INC-42")
	ce.slack.waitFor("the not-an-id reply", inThread(3, "`INC-42` is not an incident id"))
	mention(4, "investigate")
	ce.slack.waitFor("the which-incident reply", inThread(4, "Which incident?"))
	if n := len(ce.fake.Requests()); n != before {
		t.Fatalf("a refused investigate called the model %d times", n-before)
	}
	if n := sessions(); n != sessionsBefore {
		t.Fatalf("a refused investigate started %d sessions", n-sessionsBefore)
	}

	// The investigation.
	ce.fake.Add(
		llmfake.Reply("", llmfake.Call{ID: "call_f", Name: "report_finding", Arguments: `{"summary":"Latency on api follows the pool exhaustion.",
			"hypotheses":[{"cause":"the connection pool is too small","confidence":"medium","evidence":["ev1"]}],
			"impact":"checkout is slow","next_steps":[{"action":"raise the pool","command":"echo pool","target":"server","needs_approval":true}]}`}),
		llmfake.Text("Reported: the pool is the likely cause."),
	)
	mention(5, "investigate "+inc)
	msg := ce.slack.waitFor("the finding in the thread", inThread(5, "Finding on incident"))
	if !containsAll(msg.text(), "Latency on api follows the pool exhaustion.", "[medium] the connection pool is too small (evidence: ev1)", "`echo pool` on server") {
		t.Fatalf("finding message: %s", msg.text())
	}
	ce.slack.waitFor("the answer streamed into the thread, under the folded pack", method("chat.update", "🔎 Evidence: ", "alert 1", "Reported: the pool is the likely cause."))

	reqs := ce.fake.Requests()
	if len(reqs) < before+2 {
		t.Fatalf("the investigation made %d model requests", len(reqs)-before)
	}
	var user string
	for _, m := range reqs[before].Messages {
		if m.Role == "user" {
			user = m.Content
			break
		}
	}
	if !containsAll(user, "<<<EVIDENCE ", "(untrusted data gathered by the platform", "## The alert", "HighLatency", "Investigate incident "+inc) {
		t.Fatalf("the first request of the chat investigation lacks the evidence pack:\n%s", user)
	}
	if strings.Contains(user, "s3cr3t-token") {
		t.Fatalf("the pack carries the alert's token unmasked:\n%s", user)
	}

	// The finding is on the incident, from a Slack session of this thread.
	d := owner.must(200, "GET", "/api/incidents/"+inc, nil).JSON()
	lf := d["latest_finding"].(map[string]any)
	if lf["status"] != "reported" || lf["summary"] != "Latency on api follows the pool exhaustion." {
		t.Fatalf("latest finding: %v", lf)
	}
	sd := owner.must(200, "GET", "/api/sessions/detail/"+lf["session_id"].(string), nil).JSON()
	if sd["source"] != "slack" {
		t.Fatalf("the investigation's session: %v", sd)
	}
	audit := owner.must(200, "GET", "/api/audit-logs?action=incident.investigated", nil).JSON()["items"].([]any)
	if len(audit) != 1 || audit[0].(map[string]any)["target_id"] != inc || audit[0].(map[string]any)["detail"].(map[string]any)["source"] != "slack" {
		t.Fatalf("the investigation's audit: %v", audit)
	}
}
