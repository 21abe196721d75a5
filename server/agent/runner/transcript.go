package runner

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/store"
)

// encodeTranscript stores messages and the pending call as JSON that does
// not escape <, > and &: a resumed run sends the model its history (tool
// arguments included) as it was, not rewritten as \u003e and \u0026.
func encodeTranscript(msgs []llm.Message, p *agent.Pending) (string, string) {
	if msgs == nil {
		msgs = []llm.Message{}
	}
	pending := ""
	if p != nil {
		pending = marshalNoEscape(p)
	}
	return marshalNoEscape(msgs), pending
}

func marshalNoEscape(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

// DecodeTranscript reads a stored transcript: its messages and the call it
// waits on, if any.
func DecodeTranscript(t *store.Transcript) ([]llm.Message, *agent.Pending, error) {
	var msgs []llm.Message
	if err := json.Unmarshal([]byte(t.Messages), &msgs); err != nil {
		return nil, nil, fmt.Errorf("stored transcript unreadable: %w", err)
	}
	var p *agent.Pending
	if t.Pending != "" {
		p = &agent.Pending{}
		if err := json.Unmarshal([]byte(t.Pending), p); err != nil {
			return nil, nil, fmt.Errorf("stored pending call unreadable: %w", err)
		}
	}
	return msgs, p, nil
}

// TitleFrom makes a session title of the first prompt: its first line,
// whitespace collapsed, cut at a word before 80 characters.
func TitleFrom(prompt string) string {
	line := strings.TrimSpace(prompt)
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	line = strings.Join(strings.Fields(line), " ")
	return clip(line, 80)
}

// summarize is the session's summary: the last assistant answer, clipped.
func summarize(msgs []llm.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleAssistant && strings.TrimSpace(msgs[i].Content) != "" {
			return clip(strings.Join(strings.Fields(msgs[i].Content), " "), 280)
		}
	}
	return ""
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	cut := string(r[:n-1])
	if i := strings.LastIndexByte(cut, ' '); i > n/2 {
		cut = cut[:i]
	}
	return cut + "…"
}
