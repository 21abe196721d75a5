// Package llmfake is a scripted language model for tests: a loopback HTTP
// server speaking the real OpenAI chat-completions and Anthropic Messages
// wire formats, so the providers' own SDKs are what talk to it.
//
//	fake := llmfake.New(t,
//		llmfake.ToolCall("run_command", `{"command":"df -h"}`),
//		llmfake.Text("The disk is 40% full."),
//	)
//	p, _ := llm.New(fake.Config(llm.ProviderOpenAI))
//
// Each request consumes the next Turn of the script, whichever wire format
// it uses; every request is recorded for assertions.
package llmfake

import (
	"strings"
	"time"
	"unicode/utf8"
)

// Turn is one scripted answer. The zero fields mean "not this"; build turns
// with the constructors and refine them with the With/After methods.
type Turn struct {
	Text  string // streamed in several deltas
	Calls []Call // tool calls, arguments streamed in several pieces
	// Status, when not 0, answers with this HTTP error status and the
	// provider's error envelope instead of a completion.
	Status     int
	RetryAfter time.Duration // sent with Status as Retry-After (seconds) and retry-after-ms
	Garbage    bool          // answer 200 with a body that is not the wire format
	Delay      time.Duration // wait before answering (headers included)
	Hang       bool          // never answer; return when the client goes away
	Cut        bool          // stream Text, then drop the connection mid-stream
	Usage      *Usage        // reported usage; nil derives it from the sizes
	// Reasoning is streamed as the dialect carries thinking: OpenAI-compatible
	// servers as reasoning_content deltas, Anthropic as a signed thinking block.
	Reasoning string
	NoUsage   bool // send no usage at all, as servers ignoring include_usage do
	repeat    bool
}

// Call is one scripted tool call. ID is generated when empty.
type Call struct {
	ID        string
	Name      string
	Arguments string
}

// Usage is the token count the fake reports for a turn.
type Usage struct {
	InputTokens  int
	OutputTokens int
}

// Text answers with assistant text and no tool calls.
func Text(s string) Turn { return Turn{Text: s} }

// ToolCall answers with a single tool call.
func ToolCall(name, arguments string) Turn {
	return Turn{Calls: []Call{{Name: name, Arguments: arguments}}}
}

// Reply answers with text followed by any number of tool calls.
func Reply(text string, calls ...Call) Turn { return Turn{Text: text, Calls: calls} }

// Error answers with an HTTP error status (e.g. 500, 401, 400).
func Error(status int) Turn { return Turn{Status: status} }

// RateLimited answers 429 with a Retry-After of d.
func RateLimited(d time.Duration) Turn { return Turn{Status: 429, RetryAfter: d} }

// Garbage answers 200 with a body neither SDK can read as a stream.
func Garbage() Turn { return Turn{Garbage: true} }

// Cut streams text and then drops the connection before the turn ends,
// as a proxy or crashing server would.
func Cut(text string) Turn { return Turn{Text: text, Cut: true} }

// Hang never answers, for timeout and cancel tests.
func Hang() Turn { return Turn{Hang: true} }

// Always marks t to answer every request once the script reaches it ("500
// forever"). Without it, a request past the end of the script fails the test.
func Always(t Turn) Turn { t.repeat = true; return t }

// After delays the answer by d.
func (t Turn) After(d time.Duration) Turn { t.Delay = d; return t }

// WithUsage sets the usage the turn reports.
func (t Turn) WithUsage(input, output int) Turn {
	t.Usage = &Usage{InputTokens: input, OutputTokens: output}
	return t
}

// usage is the reported usage: scripted, or about one token per four bytes.
func (t Turn) usage(requestBytes int) Usage {
	if t.Usage != nil {
		return *t.Usage
	}
	out := len(t.Text)
	for _, c := range t.Calls {
		out += len(c.Name) + len(c.Arguments)
	}
	return Usage{InputTokens: requestBytes/4 + 1, OutputTokens: out/4 + 1}
}

// textPieces splits s into word-sized deltas (each keeps its trailing
// space), so a stream of one short sentence still has several chunks.
func textPieces(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexByte(s, ' ')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// argPieces splits tool-call arguments into at least three pieces (when
// long enough), cutting inside keys and values as real servers do.
func argPieces(s string) []string {
	if len(s) < 3 {
		return []string{s}
	}
	n := max(3, len(s)/8)
	size := (len(s) + n - 1) / n
	var out []string
	for len(s) > size {
		cut := size
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut++ // never split a character: each piece travels as a JSON string
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return append(out, s)
}

// Thinking sets the reasoning the turn streams before its answer.
func (t Turn) Thinking(s string) Turn { t.Reasoning = s; return t }

// WithoutUsage makes the turn report no token counts.
func (t Turn) WithoutUsage() Turn { t.NoUsage = true; return t }
