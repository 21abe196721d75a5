package llm

import (
	"encoding/json"
	"unicode/utf8"
)

// No tokenizer ships in this binary (the vocabularies are megabytes each and
// differ per model family), so requests are counted with a conservative
// estimate instead: every class of character is charged at least what the
// byte-level BPE tokenizers of the common families (OpenAI's cl100k/o200k,
// Llama 3, Qwen, Mistral) spend on it. The estimate may overcount by a
// factor of about two on English prose; it must never undercount, because
// an undercount is a request the server refuses (or, on Ollama, silently
// truncates). testdata/token_counts.json holds published counts it is
// checked against (tokens_test.go), with where each came from.

// Per-request and per-message overheads: chat templates wrap each message in
// role markers (OpenAI documents 3 tokens a message and 3 to prime the
// reply); a tool-calling template adds its own instructions (Qwen's and
// Hermes' run to about 150 tokens) besides the tool schemas themselves.
const (
	tokensPerMessage  = 8
	tokensPerRequest  = 8
	tokensToolsHeader = 160
	tokensPerTool     = 12
)

// EstimateTokens is a conservative token count of s.
func EstimateTokens(s string) int {
	n := 0
	letters, upper, vowels := 0, false, false
	endWord := func() {
		if letters == 0 {
			return
		}
		if vowels {
			n += (letters + 2) / 3
		} else {
			// No vowel: an identifier, a hash or an abbreviation, which
			// BPE vocabularies split into one or two letters a token.
			n += (letters + 1) / 2
		}
		letters, upper, vowels = 0, false, false
	}
	spaces := 0
	for i, w := 0, 0; i < len(s); i += w {
		r, size := utf8.DecodeRuneInString(s[i:])
		w = size
		isLetter := r < utf8.RuneSelf && (r|0x20 >= 'a' && r|0x20 <= 'z')
		if isLetter {
			isUpper := r <= 'Z'
			// a lower-to-upper change starts a new piece (camelCase, base64)
			if letters > 0 && isUpper && !upper {
				endWord()
			}
			if spaces > 1 {
				n += (spaces + 1) / 2
			}
			spaces = 0
			letters++
			upper = isUpper
			switch r | 0x20 {
			case 'a', 'e', 'i', 'o', 'u', 'y':
				vowels = true
			}
			continue
		}
		endWord()
		switch {
		case r == ' ':
			spaces++
			continue
		case r >= '0' && r <= '9':
			n++ // Llama 2, Mistral and Qwen spend a token on every digit
		case r == utf8.RuneError && size == 1:
			n++ // a stray byte is a byte-fallback token
		case r < utf8.RuneSelf:
			n++ // punctuation, newline, tab: one each at most
		case size == 2:
			n++
		case size == 3:
			n += 2
		default:
			n += 3 // emoji and other astral characters
		}
		// A space before anything but a letter is a token of its own
		// (cl100k writes "2 + 2" as "2", " +", " ", "2").
		n += spaces
		spaces = 0
	}
	endWord()
	n += spaces
	return n
}

// EstimateMessage is the conservative count of one message as a chat
// template renders it: role markers, content, reasoning that is sent back,
// and tool calls as the JSON the template writes.
func EstimateMessage(m Message) int {
	n := tokensPerMessage + EstimateTokens(m.Content)
	if m.ReasoningSignature != "" {
		n += EstimateTokens(m.Reasoning) + len(m.ReasoningSignature)/3
	}
	for _, c := range m.ToolCalls {
		n += tokensPerTool + EstimateTokens(c.ID) + EstimateTokens(c.Name) + EstimateTokens(string(c.Arguments))
	}
	if m.ToolCallID != "" {
		n += EstimateTokens(m.ToolCallID)
	}
	return n
}

// EstimateTools is the conservative count of the tool definitions.
func EstimateTools(tools []ToolSpec) int {
	if len(tools) == 0 {
		return 0
	}
	n := tokensToolsHeader
	for _, t := range tools {
		raw, _ := json.Marshal(t)
		n += tokensPerTool + EstimateTokens(string(raw))
	}
	return n
}

// EstimateRequest is the conservative count of the prompt req sends (not
// the answer: add the answer reserve for the context window's total).
func EstimateRequest(req Request) int {
	n := tokensPerRequest + EstimateTokens(req.System) + EstimateTools(req.Tools)
	if req.System != "" {
		n += tokensPerMessage
	}
	for _, m := range req.Messages {
		n += EstimateMessage(m)
	}
	return n
}
