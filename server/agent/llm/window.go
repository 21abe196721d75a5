package llm

import (
	"net"
	"net/url"
	"strings"
)

// knownWindows are context windows, in tokens, of well-known model names
// (matched like prices: exact, else the longest prefix followed by "-",
// ":" or "."), from each vendor's model pages. Local models are listed at
// the window their server runs them with by default, not the model's
// maximum: Ollama loads models with a 4096-token context unless
// OLLAMA_CONTEXT_LENGTH or num_ctx says otherwise, so "llama3.1:8b" behind
// Ollama gets 4096 however long Llama 3.1 could read.
var knownWindows = map[string]int{
	"gpt-5": 400000, "gpt-5-mini": 400000, "gpt-5-nano": 400000,
	"gpt-4.1": 1047576, "gpt-4.1-mini": 1047576, "gpt-4.1-nano": 1047576,
	"gpt-4o": 128000, "gpt-4o-mini": 128000, "gpt-4-turbo": 128000, "gpt-4": 8192,
	"gpt-3.5-turbo": 16385, "o3": 200000, "o4-mini": 200000, "o1": 200000,
	"claude": 200000,
	// local families, at Ollama's default
	"llama2": 4096, "llama3": 4096, "llama3.1": 4096, "llama3.2": 4096, "llama3.3": 4096,
	"qwen2": 4096, "qwen2.5": 4096, "qwen2.5-coder": 4096, "qwen3": 4096, "deepseek-r1": 4096,
	"mistral": 4096, "mixtral": 4096, "gemma2": 4096, "gemma3": 4096, "phi3": 4096, "phi4": 4096,
	"gpt-oss": 4096,
}

// DefaultContextWindow is the context window assumed for model when its
// org sets none; 0 when the name is unknown.
func DefaultContextWindow(model string) int {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:] // "Qwen/Qwen2.5-7B-Instruct" as vLLM names it
	}
	if w, ok := knownWindows[m]; ok {
		return w
	}
	best := ""
	for name := range knownWindows {
		if len(name) > len(best) && len(m) > len(name) && strings.HasPrefix(m, name) && strings.ContainsRune("-:.", rune(m[len(name)])) {
			best = name
		}
	}
	return knownWindows[best]
}

// IsLocalURL reports whether base points at this machine or a private
// network (loopback, RFC 1918, link-local, *.local, a bare host name): where
// Ollama, llama.cpp and vLLM run, and where open models write tool calls
// into their text more often than hosted APIs do.
func IsLocalURL(base string) bool {
	if base == "" {
		return false
	}
	u, err := url.Parse(base)
	if err != nil || u.Hostname() == "" {
		return false
	}
	host := strings.ToLower(u.Hostname())
	if host == "localhost" || strings.HasSuffix(host, ".local") || strings.HasSuffix(host, ".internal") || !strings.Contains(host, ".") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast())
}
