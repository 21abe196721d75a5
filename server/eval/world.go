package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/tools"
	"github.com/opsagent/opsagent/server/tools/shellscan"
)

// noData is what an unmatched call gets: the world has nothing for it.
const noData = "no data: nothing in this environment answers that call"

// CallRecord is one tool call of a run, as the scorer sees it.
type CallRecord struct {
	ID        string `json:"id"`
	Tool      string `json:"tool"`
	Arguments string `json:"arguments"`
	// Command is the call as a person reads it (the shell line, METHOD URL,
	// the query).
	Command string `json:"command"`
	Target  string `json:"target,omitempty"`
	// Change: the call could change something (not provably read-only).
	Change bool `json:"change"`
	// Approved: a change the scenario lets run (world.commands approve).
	Approved bool `json:"approved,omitempty"`
	// Matched: the world had an answer; false answered "no data".
	Matched bool   `json:"matched"`
	Output  string `json:"output"`
}

// world answers a run's tool calls from a scenario and records them.
type world struct {
	s        *Scenario
	readOnly *shellscan.ReadOnly

	mu    sync.Mutex
	calls []CallRecord
	// announced holds, per tool, the ids of calls the loop announced
	// (tool.call events) and has not run yet: the loop runs a step's calls
	// in the order it announces them.
	announced map[string][]string
}

// announce notes a tool.call event's id.
func (w *world) announce(tool, id string) {
	w.mu.Lock()
	if w.announced == nil {
		w.announced = map[string][]string{}
	}
	w.announced[tool] = append(w.announced[tool], id)
	w.mu.Unlock()
}

func (w *world) takeCallID(tool string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	ids := w.announced[tool]
	if len(ids) == 0 {
		return ""
	}
	w.announced[tool] = ids[1:]
	return ids[0]
}

func newWorld(s *Scenario) (*world, error) {
	ro, err := shellscan.NewReadOnly(nil)
	if err != nil {
		return nil, err
	}
	return &world{s: s, readOnly: ro}, nil
}

func (w *world) record(c CallRecord) {
	w.mu.Lock()
	w.calls = append(w.calls, c)
	w.mu.Unlock()
}

// Calls returns the calls so far.
func (w *world) Calls() []CallRecord {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]CallRecord(nil), w.calls...)
}

// kinds are the integrations the simulated project has: those the world
// answers for.
func (w *world) kinds() map[string]bool {
	k := map[string]bool{"prometheus": len(w.s.World.Metrics) > 0, "loki": len(w.s.World.Logs) > 0}
	for _, t := range w.s.World.Tools {
		switch {
		case strings.HasPrefix(t.Tool, "alertmanager_"):
			k["alertmanager"] = true
		case strings.HasPrefix(t.Tool, "grafana_"):
			k["grafana"] = true
		case strings.HasPrefix(t.Tool, "prometheus_"):
			k["prometheus"] = true
		case strings.HasPrefix(t.Tool, "loki_"):
			k["loki"] = true
		}
	}
	return k
}

// tools are the project's tools as a real run offers them (the same names,
// descriptions, schemas and risk classes), answered by the world. No tool
// here holds a network client: the integrations' endpoints are never set.
func (w *world) tools() []agent.Tool {
	real := []agent.Tool{&tools.RunCommand{}, &tools.HTTPRequest{}}
	real = append(real, tools.IntegrationTools(tools.QueryDeps{}, w.kinds())...)
	out := make([]agent.Tool, 0, len(real)+1)
	for _, t := range real {
		out = append(out, &simTool{real: t, w: w})
	}
	out = append(out, &simTool{w: w, spec: llm.ToolSpec{Name: "search_knowledge",
		Description: "Search the project's knowledge base (runbooks, facts, past incidents) and read the best passages.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","minLength":1,"maxLength":500}},"required":["query"]}`)}})
	return out
}

// simTool is a real tool's face with the world behind it.
type simTool struct {
	real agent.Tool // nil for the tools defined here
	spec llm.ToolSpec
	w    *world
}

func (t *simTool) Spec() llm.ToolSpec {
	if t.real != nil {
		return t.real.Spec()
	}
	return t.spec
}

func (t *simTool) ReadOnly() bool { return t.real == nil || t.real.ReadOnly() }

func (t *simTool) Run(ctx context.Context, args json.RawMessage) (string, error) {
	name := t.Spec().Name
	rec := CallRecord{Tool: name, Arguments: string(args), Command: string(args)}
	rec.ID = t.w.takeCallID(name)
	if r, ok := t.real.(tools.Renderer); ok {
		if rd, err := r.Render(args); err == nil {
			rec.Command, rec.Target = rd.Command, rd.Target
		}
	}
	rec.Change = t.isChange(name, args, rec.Command)
	out, isErr := t.answer(name, args, &rec)
	rec.Output = out
	t.w.record(rec)
	if isErr {
		return "", fmt.Errorf("%s", out)
	}
	return out, nil
}

// isChange says whether the call could change something, as the policy
// layer judges it: the tool's class, and for shell lines the analyser's
// read-only proof.
func (t *simTool) isChange(name string, args json.RawMessage, command string) bool {
	if c, ok := t.real.(tools.Classifier); ok {
		return !c.ReadOnlyCall(args)
	}
	if name == "run_command" {
		ok, _ := t.w.readOnly.Proves(shellscan.Analyze(command))
		return !ok
	}
	return !t.ReadOnly()
}

// answer finds the world's answer; the bool marks an error result.
func (t *simTool) answer(name string, args json.RawMessage, rec *CallRecord) (string, bool) {
	var m map[string]any
	_ = json.Unmarshal(args, &m)
	str := func(k string) string { s, _ := m[k].(string); return s }
	world := t.w.s.World
	switch name {
	case "run_command":
		target := str("target")
		if target == "" {
			target = "server"
		}
		rec.Target = target
		for _, c := range world.Commands {
			if c.Target != "" && c.Target != target {
				continue
			}
			if regexp.MustCompile(c.Match).MatchString(str("command")) {
				rec.Matched = true
				if rec.Change && !c.Approve {
					return "refused: this change needs a person's approval and was not approved (evaluation)", true
				}
				rec.Approved = rec.Change
				return fmt.Sprintf("exit code %d\n%s", c.ExitCode, c.Output), false
			}
		}
		if rec.Change {
			return "refused: this change needs a person's approval and was not approved (evaluation)", true
		}
	case "http_request":
		line := strings.ToUpper(str("method")) + " " + str("url")
		for _, h := range world.HTTP {
			if regexp.MustCompile(h.Match).MatchString(line) {
				rec.Matched = true
				if rec.Change {
					return "refused: this request needs a person's approval and was not approved (evaluation)", true
				}
				return fmt.Sprintf("HTTP %d\n\n%s", h.Status, h.Body), false
			}
		}
	case "prometheus_query", "prometheus_query_range":
		for _, s := range world.Metrics {
			if regexp.MustCompile(s.Match).MatchString(str("query")) {
				rec.Matched = true
				return s.Output, false
			}
		}
	case "loki_query":
		for _, l := range world.Logs {
			if regexp.MustCompile(l.Match).MatchString(str("query")) {
				rec.Matched = true
				return strings.Join(l.Lines, "\n"), false
			}
		}
	case "search_knowledge":
		if out := searchDocs(world.Knowledge, str("query")); out != "" {
			rec.Matched = true
			return out, false
		}
	}
	for _, a := range world.Tools {
		if a.Tool == name && regexp.MustCompile(a.Match).MatchString(string(args)) {
			rec.Matched = true
			if rec.Change && name != "search_knowledge" {
				return "refused: this change needs a person's approval and was not approved (evaluation)", true
			}
			return a.Output, a.Error
		}
	}
	if rec.Change {
		return "refused: this change needs a person's approval and was not approved (evaluation)", true
	}
	return noData, false
}

// searchDocs ranks documents by the query's words they contain.
func searchDocs(docs []Document, query string) string {
	words := strings.Fields(strings.ToLower(query))
	type hit struct {
		d     Document
		score int
	}
	var best []hit
	for _, d := range docs {
		text := strings.ToLower(d.Title + " " + d.Content)
		n := 0
		for _, w := range words {
			if len(w) > 2 && strings.Contains(text, w) {
				n++
			}
		}
		if n > 0 {
			best = append(best, hit{d, n})
		}
	}
	if len(best) == 0 {
		return ""
	}
	var b strings.Builder
	for i := 0; i < len(best); i++ {
		for j := i + 1; j < len(best); j++ {
			if best[j].score > best[i].score {
				best[i], best[j] = best[j], best[i]
			}
		}
	}
	for i, h := range best {
		if i == 3 {
			break
		}
		fmt.Fprintf(&b, "## %s\n%s\n\n", h.d.Title, h.d.Content)
	}
	return strings.TrimSpace(b.String())
}
