// Package tools holds the agent's operations tools: run_command,
// http_request behind an egress guard, and read-only query tools for the
// monitoring people already run (Prometheus, Alertmanager, Loki, Grafana).
// Each tool is an agent.Tool that declares whether it only reads; tools
// whose risk depends on the call also say so per call (Classifier), and
// every tool renders a call as the text rules match on (Renderer).
// Nothing here stores or serves anything: the server builds the tools per
// run with the project's settings.
package tools

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Rendered is a call as a person reads it in an approval and as rules
// match it: where it acts and exactly what it does.
type Rendered struct {
	Target  string `json:"target"`
	Command string `json:"command"`
}

// Renderer is implemented by tools that render their calls.
type Renderer interface {
	Render(args json.RawMessage) (Rendered, error)
}

// Classifier is implemented by tools whose calls differ in risk
// (http_request: GET only reads, POST may change things).
type Classifier interface {
	ReadOnlyCall(args json.RawMessage) bool
}

// capBuffer keeps the head and the tail of a stream within limit bytes and
// counts what it dropped between them.
type capBuffer struct {
	limit   int
	head    []byte
	tail    []byte // ring of the last limit/4 bytes once head is full
	dropped int64
}

func newCapBuffer(limit int) *capBuffer { return &capBuffer{limit: limit} }

func (b *capBuffer) Write(p []byte) (int, error) {
	n := len(p)
	headCap := b.limit - b.limit/4
	if room := headCap - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	tailCap := b.limit / 4
	b.tail = append(b.tail, p...)
	if over := len(b.tail) - tailCap; over > 0 {
		b.dropped += int64(over)
		b.tail = append(b.tail[:0], b.tail[over:]...)
	}
	return n, nil
}

// String is the kept text, with a note where bytes were dropped.
func (b *capBuffer) String() string {
	if b.dropped == 0 {
		return string(b.head) + string(b.tail)
	}
	return fmt.Sprintf("%s\n[... %d bytes of output dropped (output cap %d bytes) ...]\n%s", b.head, b.dropped, b.limit, b.tail)
}

// decode reads a tool's arguments into v; the schema already checked them.
func decode(args json.RawMessage, v any) error {
	if err := json.Unmarshal(args, v); err != nil {
		return fmt.Errorf("bad arguments: %v", err)
	}
	return nil
}

// schema builds a JSON Schema object from properties and required names,
// refusing unknown fields so a typo fails loudly instead of being ignored.
func schema(props map[string]any, required ...string) json.RawMessage {
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return b
}

func str(desc string, extra ...any) map[string]any {
	m := map[string]any{"type": "string", "description": desc}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i].(string)] = extra[i+1]
	}
	return m
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
