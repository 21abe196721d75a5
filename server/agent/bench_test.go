package agent_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// instantProvider answers at once from memory: a tool call for each step but
// the last, then text. With it, a benchmark measures the loop alone.
type instantProvider struct {
	steps int
	n     int
	ids   []string
}

func (p *instantProvider) Stream(_ context.Context, _ llm.Request, onDelta func(llm.Delta)) (llm.Response, error) {
	p.n++
	onDelta(llm.Delta{Text: "checking "})
	onDelta(llm.Delta{Text: "the host"})
	u := llm.Usage{InputTokens: 1200, OutputTokens: 40}
	if p.n%p.steps != 0 {
		return llm.Response{Content: "checking the host", Usage: u, ToolCalls: []llm.ToolCall{{
			ID: p.ids[p.n%p.steps], Name: "run_command", Arguments: json.RawMessage(`{"command":"uptime"}`),
		}}}, nil
	}
	return llm.Response{Content: "all good", Usage: u}, nil
}

// benchLoop runs a 10-step conversation per iteration; the tool answers
// with output bytes, and every event goes to a consumer that keeps nothing.
func benchLoop(b *testing.B, output int) {
	const steps = 10
	p := &instantProvider{steps: steps}
	for i := range steps {
		p.ids = append(p.ids, "call_"+strconv.Itoa(i))
	}
	line := "load average: 0.10 0.20 0.30\n"
	out := strings.Repeat(line, output/len(line)+1)[:output]
	cmd := &commandTool{run: func(context.Context, string) (string, error) { return out, nil }}
	tools, err := agent.NewToolSet(cmd)
	if err != nil {
		b.Fatal(err)
	}
	cfg := agent.Config{Provider: p, Model: "gpt-4o-mini", System: "You are an SRE assistant.", Tools: tools,
		Gate: agent.GateFunc(func(context.Context, agent.Call) agent.Decision { return agent.Allow() })}
	events := 0
	emit := func(agent.Event) { events++ }
	history := ask("is the host healthy?")
	b.ReportAllocs()
	cpu0 := processCPU()
	for b.Loop() {
		res, err := agent.Run(context.Background(), cfg, history, emit)
		if err != nil || res.Status != agent.StatusCompleted || res.Steps != steps {
			b.Fatalf("run: %v %s %d", err, res.Status, res.Steps)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/step")
	b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N*steps), "cpu-ns/step")
}

func BenchmarkLoopStep1KiBOutput(b *testing.B)  { benchLoop(b, 1<<10) }
func BenchmarkLoopStep64KiBOutput(b *testing.B) { benchLoop(b, 64<<10) }

// BenchmarkLoopbackStep is one step through an SDK and loopback HTTP to
// llmfake, for scale: the loop's share of a step is the difference.
func BenchmarkLoopbackStep(b *testing.B) {
	for _, provider := range providers {
		b.Run(provider, func(b *testing.B) {
			fake := llmfake.New(b, llmfake.Always(llmfake.Text("all good, nothing to do")))
			p, err := llm.New(fake.Config(provider))
			if err != nil {
				b.Fatal(err)
			}
			cfg := agent.Config{Provider: p}
			b.ReportAllocs()
			for b.Loop() {
				if res, _ := agent.Run(context.Background(), cfg, ask("hi"), nil); res.Status != agent.StatusCompleted {
					b.Fatalf("%s: %s", res.Status, res.Reason)
				}
			}
		})
	}
}
