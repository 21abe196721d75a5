package server

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/eval"
	"github.com/opsagent/opsagent/server/investigate"
	"github.com/opsagent/opsagent/server/webhook"
	"github.com/opsagent/opsagent/store"
)

// Recording (issue 37): a past investigation becomes a scenario, so a
// team's own incidents become its regression suite. The scenario holds the
// incident's alerts, its evidence pack and every tool call of its sessions
// with the output it really got (transcripts keep tool output masked, and
// the project's secret values are masked again here); its expectation is
// the finding's root cause, for the person to edit.

// EvalScenarioOut is a recorded scenario.
type EvalScenarioOut struct {
	Name string `json:"name"`
	YAML string `json:"yaml" doc:"the scenario file: edit its expect section, then run it with opsagent eval run"`
}

func (s *Server) evalRecordRoutes() []*Route {
	return []*Route{{Method: "GET", Path: "/api/incidents/{incident_id}/eval-scenario",
		Summary: "Record the incident's investigation as an evaluation scenario (alerts, evidence, every tool call with its output, masked)",
		Tags:    []string{"evals"}, Auth: AuthAny, Perm: PermSessionsRead, Project: true, Resp: EvalScenarioOut{}, Status: 200,
		Handle: s.handleRecordEvalScenario}}
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

func (s *Server) handleRecordEvalScenario(c *Ctx) error {
	id, err := c.IDParam("incident_id")
	if err != nil {
		return err
	}
	rec, err := s.db.FindIncidentRecords(c.Context(), c.OrgID(), c.ProjectID(), id)
	if err != nil {
		return err
	}
	inc := rec.Incident
	name := strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(inc.Title), "-"), "-")
	if len(name) > 50 {
		name = strings.Trim(name[:50], "-")
	}
	if name == "" {
		name = "incident"
	}
	name += "-" + inc.ID[len(inc.ID)-6:]
	sc := eval.Scenario{Name: name, AgentType: "sre",
		Description: fmt.Sprintf("Recorded from incident %s (%s), opened %s.", inc.ID, inc.Title, inc.OpenedAt.Format("2006-01-02 15:04 UTC"))}
	mask := s.recordMasker(c)
	// The alerts, as the receiver parsed them.
	for _, ev := range rec.Events {
		var alerts []webhook.Alert
		if json.Unmarshal([]byte(ev.Alerts), &alerts) != nil {
			continue
		}
		for _, a := range alerts {
			if len(sc.Input.Alerts) >= 20 {
				break
			}
			labels := map[string]string{}
			for k, v := range a.Labels {
				labels[k] = mask(v)
			}
			if labels["alertname"] == "" {
				labels["alertname"] = mask(a.Title)
			}
			in := eval.AlertInput{Labels: labels, Annotations: map[string]string{}}
			if a.Summary != "" {
				in.Annotations["summary"] = mask(a.Summary)
			}
			sc.Input.Alerts = append(sc.Input.Alerts, in)
		}
	}
	if len(sc.Input.Alerts) == 0 {
		sc.Input.Prompt = "Investigate: " + mask(inc.Title)
	}
	// The evidence the platform gathered.
	if js, err := s.db.LatestEvidence(c.Context(), c.OrgID(), c.ProjectID(), inc.ID); err == nil {
		var pack investigate.Pack
		if json.Unmarshal([]byte(js), &pack) == nil {
			addEvidence(&sc.World, &pack, mask)
		}
	}
	// Every tool call with what it answered.
	steps := 0
	for _, sess := range rec.Sessions {
		var msgs []llm.Message
		if json.Unmarshal([]byte(sess.Transcript), &msgs) != nil {
			continue
		}
		results := map[string]llm.Message{}
		for _, m := range msgs {
			if m.Role == llm.RoleTool {
				results[m.ToolCallID] = m
			}
			if m.Role == llm.RoleAssistant {
				steps++
			}
		}
		for _, m := range msgs {
			for _, call := range m.ToolCalls {
				if res, ok := results[call.ID]; ok {
					addCall(&sc.World, call, res, mask)
				}
			}
		}
	}
	sc.World.Targets = recordTargets(sc.World.Commands)
	// The expectation: the latest finding's root cause, for the team to edit.
	if f, err := s.db.LatestFinding(c.Context(), c.OrgID(), c.ProjectID(), inc.ID); err == nil && f.Status == store.FindingReported {
		var body investigate.Report
		if json.Unmarshal([]byte(f.Body), &body) == nil && len(body.Hypotheses) > 0 {
			sc.Expect.RootCause.Match = []string{"/" + regexp.QuoteMeta(firstWords(mask(body.Hypotheses[0].Cause), 6)) + "/"}
		}
	}
	if len(sc.Expect.RootCause.Match) == 0 {
		sc.Expect.NoFinding = true
	}
	if steps > 0 {
		sc.Expect.MaxSteps = steps + 3
	}
	out, err := marshalScenario(&sc)
	if err != nil {
		return err
	}
	// What is recorded must load: the round trip is the contract.
	if _, err := eval.Parse(name+".yaml", []byte(out)); err != nil {
		return fmt.Errorf("recorded scenario does not parse: %w", err)
	}
	c.Audit("eval.recorded", "success", "incident", inc.ID, nil)
	return c.JSON(200, EvalScenarioOut{Name: name, YAML: out})
}

// masked is the mask's mark in recorded text; in a match pattern it
// becomes ".+", so a replayed call that names the secret still matches.
const masked = "[masked]"

// recordMasker masks the project's secret values, as tool output is.
func (s *Server) recordMasker(c *Ctx) func(string) string {
	vs, err := s.secrets.Values(c.Context(), c.OrgID(), c.ProjectID())
	if err != nil {
		s.log.Warn("eval record: secret values unreadable; masking what transcripts masked", "err", err)
	}
	return func(text string) string {
		for _, v := range vs {
			if len(v) >= 4 {
				text = strings.ReplaceAll(text, v, masked)
			}
		}
		return text
	}
}

func addEvidence(w *eval.World, p *investigate.Pack, mask func(string) string) {
	for _, it := range p.Items {
		content := mask(it.Content)
		switch it.Source {
		case "knowledge":
			w.Knowledge = append(w.Knowledge, eval.Document{Title: mask(it.Title), Content: content})
		case "incidents":
			w.Incidents = append(w.Incidents, eval.PastIncident{Title: mask(it.Title), Resolution: content})
		case "changes":
			w.Changes = append(w.Changes, eval.ChangeEntry{Title: mask(it.Title), Kind: "deploy"})
		case "prometheus":
			w.Metrics = append(w.Metrics, eval.SeriesAnswer{Match: ".*", Output: content})
		case "loki":
			w.Logs = append(w.Logs, eval.LogAnswer{Match: ".*", Lines: strings.Split(content, "\n")})
		}
	}
}

func addCall(w *eval.World, call llm.ToolCall, res llm.Message, mask func(string) string) {
	var args map[string]any
	_ = json.Unmarshal(call.Arguments, &args)
	str := func(k string) string { v, _ := args[k].(string); return v }
	out := mask(res.Content)
	exact := func(s string) string {
		parts := strings.Split(mask(s), masked)
		for i := range parts {
			parts[i] = regexp.QuoteMeta(parts[i])
		}
		return "^" + strings.Join(parts, ".+") + "$"
	}
	switch call.Name {
	case "report_finding", "get_tool_output":
	case "run_command":
		w.Commands = append(w.Commands, eval.CommandAnswer{Match: exact(str("command")), Target: str("target"), Output: out,
			// It ran for real, so a person (or a rule) let it: replay it as approved.
			Approve: !res.IsError})
	case "http_request":
		w.HTTP = append(w.HTTP, eval.HTTPAnswer{Match: exact(strings.ToUpper(str("method")) + " " + str("url")), Status: 200, Body: out})
	case "prometheus_query", "prometheus_query_range":
		w.Metrics = append(w.Metrics, eval.SeriesAnswer{Match: exact(str("query")), Output: out})
	case "loki_query":
		w.Logs = append(w.Logs, eval.LogAnswer{Match: exact(str("query")), Lines: strings.Split(out, "\n")})
	default:
		w.Tools = append(w.Tools, eval.ToolAnswer{Tool: call.Name, Match: ".*", Output: out, Error: res.IsError})
	}
}

func recordTargets(cmds []eval.CommandAnswer) []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range cmds {
		if c.Target != "" && !seen[c.Target] {
			seen[c.Target] = true
			out = append(out, c.Target)
		}
	}
	sort.Strings(out)
	return out
}

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		f = f[:n]
	}
	return strings.Join(f, " ")
}

// marshalScenario writes the scenario in its schema's field names, empty
// sections left out.
func marshalScenario(sc *eval.Scenario) (string, error) {
	b, err := yaml.Marshal(sc)
	return "# Recorded by opsagent: edit expect (what a good investigation concludes), then run it with opsagent eval run.\n" + string(b), err
}
