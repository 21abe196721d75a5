package llmfake

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// Dialect is the server an OpenAI-compatible fake imitates. They share the
// chat-completions format and differ where their documentation and
// recorded replies (../testdata/wire/*.json, with sources) show they do:
// how a too-long prompt is refused, how tool calls and reasoning stream,
// and whether usage is sent.
type Dialect string

// The dialects.
const (
	OpenAI   Dialect = ""          // api.openai.com
	LlamaCpp Dialect = "llama.cpp" // llama-server's /v1/chat/completions
	Ollama   Dialect = "ollama"    // Ollama's OpenAI compatibility endpoint
	VLLM     Dialect = "vllm"      // vLLM's OpenAI-compatible server
)

// As makes the fake behave like d with a context window of contextLimit
// tokens (0: unlimited), as counted by countTokens.
func (s *Server) As(d Dialect, contextLimit int) *Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dialect, s.ctxLimit = d, contextLimit
	return s
}

// countTokens is the fake's stand-in for a tokenizer: four bytes a token,
// the ratio OpenAI documents for English text, plus the chat template's
// markers per message. Real servers count with their model's vocabulary;
// the agent's own estimate must never count less than this.
func countTokens(r Request) int {
	n := 3
	for _, m := range r.Messages {
		n += 4 + (len(m.Content)+3)/4
		for _, c := range m.ToolCalls {
			n += 4 + (len(c.Name)+len(c.Arguments)+3)/4
		}
	}
	n += (len(r.System) + 3) / 4
	for _, t := range r.Tools {
		n += 10 + len(t)/4
	}
	return n
}

// overflows answers a prompt longer than the context the way the dialect
// does, and reports whether it did. Ollama refuses nothing: it drops the
// start of the prompt and answers (its log says "truncating input prompt").
func (s *Server) overflows(w http.ResponseWriter, rec *Request) bool {
	s.mu.Lock()
	limit, d := s.ctxLimit, s.dialect
	s.mu.Unlock()
	if limit <= 0 {
		return false
	}
	prompt := rec.Tokens
	total := prompt + rec.MaxTokens
	if rec.Path == "/v1/messages" {
		if total <= limit {
			return false
		}
		s.record(*rec)
		writeJSONError(w, 400, map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error",
			"message": fmt.Sprintf("prompt is too long: %d tokens > %d maximum", total, limit)}})
		return true
	}
	switch d {
	case Ollama:
		if prompt > limit {
			rec.Truncated = true
		}
		return false
	case LlamaCpp:
		if prompt <= limit { // llama-server checks the prompt against n_ctx per slot
			return false
		}
		s.record(*rec)
		writeJSONError(w, 400, map[string]any{"error": map[string]any{"code": 400, "type": "exceed_context_size_error",
			"message":         fmt.Sprintf("request (%d tokens) exceeds the available context size (%d tokens), try increasing it", prompt, limit),
			"n_prompt_tokens": prompt, "n_ctx": limit}})
	case VLLM:
		if total <= limit {
			return false
		}
		s.record(*rec)
		writeJSONError(w, 400, map[string]any{"object": "error", "type": "BadRequestError", "param": nil, "code": 400,
			"message": fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens "+
				"(%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
				limit, total, prompt, rec.MaxTokens)})
	default:
		if total <= limit {
			return false
		}
		s.record(*rec)
		writeJSONError(w, 400, map[string]any{"error": map[string]any{"type": "invalid_request_error", "param": "messages",
			"code": "context_length_exceeded",
			"message": fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d "+
				"tokens. Please reduce the length of the messages.", limit, total)}})
	}
	return true
}

func (s *Server) record(rec Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, rec)
}

func writeJSONError(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// usage is what the turn reports: an Ollama fake that truncated counts
// only what it kept.
func (s *Server) usage(t Turn, rec Request) Usage {
	u := t.usage(len(rec.Body))
	if t.Usage == nil && rec.Tokens > 0 {
		u.InputTokens = rec.Tokens
	}
	if rec.Truncated {
		u.InputTokens = s.ctxLimit
	}
	return u
}
