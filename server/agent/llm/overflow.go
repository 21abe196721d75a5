package llm

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
)

// Each server says "the prompt is longer than the context window" in its
// own words (testdata/wire/*.json records them with their sources):
//
//	OpenAI     400 {"error":{"code":"context_length_exceeded","message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens..."}}
//	vLLM       400 {"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (...)","type":"BadRequestError","code":400}
//	llama.cpp  400 {"error":{"code":400,"type":"exceed_context_size_error","message":"request (4476 tokens) exceeds the available context size (4096 tokens)","n_prompt_tokens":4476,"n_ctx":4096}}
//	Anthropic  400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}
//
// Ollama does not refuse: it drops the start of the prompt and answers
// (its log says "truncating input prompt"), which is why requests are
// counted before they are sent.

var (
	overflowPhrases = []string{
		"context_length_exceeded", "maximum context length", "exceed_context_size_error",
		"exceeds the available context size", "prompt is too long", "context window",
		"input is too long", "too many tokens", "context length exceeded", "reduce the length of the messages",
	}
	limitPatterns = []*regexp.Regexp{
		regexp.MustCompile(`maximum context length is (\d+)`),
		regexp.MustCompile(`available context size \((\d+) tokens\)`),
		regexp.MustCompile(`tokens > (\d+) maximum`),
		regexp.MustCompile(`context (?:window|length|size) (?:of |is )?(\d+)`),
	}
	promptPatterns = []*regexp.Regexp{
		regexp.MustCompile(`resulted in (\d+) tokens`),
		regexp.MustCompile(`request \((\d+) tokens\)`),
		regexp.MustCompile(`prompt is too long: (\d+) tokens`),
		regexp.MustCompile(`\((\d+) in the messages`),
		regexp.MustCompile(`your request has (\d+) input tokens`),
	}
)

// detectOverflow reclassifies a 4xx (or, from older llama.cpp builds, a
// 500) whose words say the context was exceeded, and reads the limit.
func detectOverflow(e *Error, raw []byte) {
	if e.Status != 400 && e.Status != 413 && e.Status != 422 && e.Status != 500 {
		return
	}
	text := strings.ToLower(e.Message + " " + string(raw))
	hit := false
	for _, p := range overflowPhrases {
		if strings.Contains(text, p) {
			hit = true
			break
		}
	}
	if !hit {
		return
	}
	e.Class = ClassContextOverflow
	var fields struct {
		Error struct {
			NCtx    int `json:"n_ctx"`
			NPrompt int `json:"n_prompt_tokens"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &fields) == nil && fields.Error.NCtx > 0 {
		e.ContextLimit, e.PromptTokens = fields.Error.NCtx, fields.Error.NPrompt
		return
	}
	e.ContextLimit = firstNumber(limitPatterns, text)
	e.PromptTokens = firstNumber(promptPatterns, text)
}

func firstNumber(patterns []*regexp.Regexp, text string) int {
	for _, p := range patterns {
		if m := p.FindStringSubmatch(text); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil {
				return n
			}
		}
	}
	return 0
}
