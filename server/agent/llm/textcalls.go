package llm

import (
	"encoding/json"
	"regexp"
	"strings"
)

// Servers parse tool calls out of a model's output with a per-model
// template; when the template is missing or the model strays from it, the
// call arrives as plain text in the answer. These are the common shapes:
//
//	Hermes, Qwen 2.5/3:   <tool_call>{"name": "f", "arguments": {...}}</tool_call>
//	Mistral (v3):         [TOOL_CALLS][{"name": "f", "arguments": {...}, "id": "abc123xyz"}]
//	Mistral (v11+):       [TOOL_CALLS]f[ARGS]{...}
//	Llama 3.x and others: {"name": "f", "parameters": {...}}  (the whole answer)
//
// Recognising them is on by default for local base URLs and off for hosted
// APIs, whose servers always parse calls themselves (Config.TextToolCalls).

var hermesCall = regexp.MustCompile(`(?s)<tool_call>(.*?)(?:</tool_call>|\z)`)

// textToolCalls returns content without the tool calls written in it, and
// those calls; content unchanged and nil when it holds none.
func textToolCalls(content string) (string, []ToolCall) {
	if strings.Contains(content, "<tool_call>") {
		var calls []ToolCall
		for _, m := range hermesCall.FindAllStringSubmatch(content, -1) {
			calls = append(calls, jsonCalls(m[1])...)
		}
		if len(calls) > 0 {
			return strings.TrimSpace(hermesCall.ReplaceAllString(content, "")), calls
		}
	}
	if i := strings.Index(content, "[TOOL_CALLS]"); i >= 0 {
		if calls := mistralCalls(content[i+len("[TOOL_CALLS]"):]); len(calls) > 0 {
			return strings.TrimSpace(content[:i]), calls
		}
	}
	body := strings.TrimSpace(content)
	body = strings.TrimPrefix(strings.TrimPrefix(body, "```json"), "```")
	body = strings.TrimSpace(strings.TrimSuffix(body, "```"))
	if strings.HasPrefix(body, "{") || strings.HasPrefix(body, "[") {
		if calls := jsonCalls(body); len(calls) > 0 {
			return "", calls
		}
	}
	return content, nil
}

// mistralCalls reads what follows [TOOL_CALLS]: a JSON array, or one or
// more "name[ARGS]{json}" pieces.
func mistralCalls(s string) []ToolCall {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "[") || strings.HasPrefix(s, "{") {
		return jsonCalls(s)
	}
	var calls []ToolCall
	for _, part := range strings.Split(s, "[TOOL_CALLS]") {
		name, args, ok := strings.Cut(part, "[ARGS]")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			continue
		}
		calls = append(calls, ToolCall{Name: name, Arguments: json.RawMessage(strings.TrimSpace(args))})
	}
	return calls
}

// jsonCalls reads one call object or an array of them. An object counts
// only with a string "name" and an "arguments" (or "parameters") value,
// so an answer that merely is JSON is not mistaken for a call. Arguments
// that are not JSON are kept as they are, so the agent can say so.
func jsonCalls(s string) []ToolCall {
	s = strings.TrimSpace(s)
	var objs []map[string]json.RawMessage
	if strings.HasPrefix(s, "[") {
		if json.Unmarshal([]byte(s), &objs) != nil {
			return nil
		}
	} else {
		var one map[string]json.RawMessage
		if json.Unmarshal([]byte(s), &one) != nil {
			return nil
		}
		objs = []map[string]json.RawMessage{one}
	}
	var calls []ToolCall
	for _, o := range objs {
		var name, id string
		if json.Unmarshal(o["name"], &name) != nil || name == "" {
			return nil
		}
		args, ok := o["arguments"]
		if !ok {
			args, ok = o["parameters"]
		}
		if !ok {
			return nil
		}
		var str string
		if json.Unmarshal(args, &str) == nil {
			args = json.RawMessage(str) // arguments sent as a JSON string
		}
		_ = json.Unmarshal(o["id"], &id)
		calls = append(calls, ToolCall{ID: id, Name: name, Arguments: args})
	}
	return calls
}
