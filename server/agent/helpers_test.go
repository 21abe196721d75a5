package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

var providers = []string{llm.ProviderOpenAI, llm.ProviderAnthropic}

// forEachProvider runs f against a fresh fake for each wire format.
func forEachProvider(t *testing.T, f func(t *testing.T, provider string)) {
	for _, p := range providers {
		t.Run(p, func(t *testing.T) { f(t, p) })
	}
}

// commandTool stands in for the real run_command: it records what it was
// asked and answers from a table, so tests see exactly what reached it.
type commandTool struct {
	mu      sync.Mutex
	ran     []string
	outputs map[string]string
	run     func(ctx context.Context, command string) (string, error)
}

func (c *commandTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "run_command", Description: "Run a shell command on the target host",
		Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string","minLength":1}},` +
			`"required":["command"],"additionalProperties":false}`)}
}
func (c *commandTool) ReadOnly() bool { return false }
func (c *commandTool) Run(ctx context.Context, args json.RawMessage) (string, error) {
	var in struct{ Command string }
	if err := json.Unmarshal(args, &in); err != nil {
		return "", err
	}
	c.mu.Lock()
	c.ran = append(c.ran, in.Command)
	c.mu.Unlock()
	if c.run != nil {
		return c.run(ctx, in.Command)
	}
	if out, ok := c.outputs[in.Command]; ok {
		return out, nil
	}
	return "ok", nil
}

func (c *commandTool) commands() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.ran...)
}

// setup starts a fake with turns and returns a Config wired to it with the
// command tool and a read-only uptime tool.
func setup(t *testing.T, provider string, cmd *commandTool, turns ...llmfake.Turn) (*llmfake.Server, agent.Config) {
	t.Helper()
	fake := llmfake.New(t, turns...)
	p, err := llm.New(fake.Config(provider))
	if err != nil {
		t.Fatal(err)
	}
	if cmd == nil {
		cmd = &commandTool{}
	}
	uptime := agent.FuncTool{
		Definition: llm.ToolSpec{Name: "uptime", Description: "Host uptime"},
		IsReadOnly: true,
		Fn:         func(context.Context, json.RawMessage) (string, error) { return "up 3 days", nil },
	}
	tools, err := agent.NewToolSet(cmd, uptime)
	if err != nil {
		t.Fatal(err)
	}
	return fake, agent.Config{Provider: p, System: "You are an SRE assistant.", Tools: tools}
}

func ask(s string) []llm.Message { return []llm.Message{{Role: llm.RoleUser, Content: s}} }

// recorder collects events; safe for the synchronous emit contract.
type recorder struct{ events []agent.Event }

func (r *recorder) emit(e agent.Event) { r.events = append(r.events, e) }

// types lists event types, collapsing runs of message.delta into one entry.
func (r *recorder) types() string {
	var out []string
	for _, e := range r.events {
		if e.Type == agent.EventMessageDelta && len(out) > 0 && out[len(out)-1] == string(e.Type) {
			continue
		}
		out = append(out, string(e.Type))
	}
	return strings.Join(out, " ")
}

func (r *recorder) of(typ agent.EventType) []any {
	var out []any
	for _, e := range r.events {
		if e.Type == typ {
			out = append(out, e.Data)
		}
	}
	return out
}

func mustRun(t *testing.T, cfg agent.Config, history []llm.Message, rec *recorder) agent.Result {
	t.Helper()
	res, err := agent.Run(context.Background(), cfg, history, rec.emit)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}
