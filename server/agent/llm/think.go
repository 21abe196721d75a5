package llm

import "strings"

// Open models served by llama.cpp, Ollama or vLLM without a reasoning
// parser write their thinking into the answer between <think> and
// </think> (DeepSeek-R1, Qwen3, QwQ). It is split off here so it is never
// the answer nor sent back as history; the agent keeps it in the transcript.

const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// splitThink returns the answer without its <think> blocks, and the
// reasoning they held. A "</think>" with no opening tag ends reasoning
// that began in the prompt (DeepSeek-R1's template opens the tag itself);
// a "<think>" never closed means the model stopped while thinking.
func splitThink(raw string) (answer, reasoning string) {
	if !strings.Contains(raw, thinkOpen) && !strings.Contains(raw, thinkClose) {
		return raw, ""
	}
	var ans, why strings.Builder
	rest := raw
	if c := strings.Index(rest, thinkClose); c >= 0 && !strings.Contains(rest[:c], thinkOpen) {
		why.WriteString(strings.TrimSpace(rest[:c]))
		rest = rest[c+len(thinkClose):]
	}
	for {
		o := strings.Index(rest, thinkOpen)
		if o < 0 {
			ans.WriteString(rest)
			break
		}
		ans.WriteString(rest[:o])
		rest = rest[o+len(thinkOpen):]
		c := strings.Index(rest, thinkClose)
		if c < 0 {
			addPara(&why, rest)
			break
		}
		addPara(&why, rest[:c])
		rest = rest[c+len(thinkClose):]
	}
	return strings.TrimSpace(ans.String()), why.String()
}

func addPara(b *strings.Builder, s string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return
	}
	if b.Len() > 0 {
		b.WriteString("\n\n")
	}
	b.WriteString(s)
}

// deltaFilter decides what of a streamed answer reaches viewers as it
// arrives: not <think> blocks, not tool calls written as text (when those
// are recognised), and nothing of a partial tag until it is known not to
// be one. What it holds back is settled by the final Response.
type deltaFilter struct {
	textCalls bool
	pending   string // text that may begin a tag
	seen      string // visible text so far, to spot an answer that is bare JSON
	hidden    string // the closing tag being waited for; "" when outside
	held      bool   // everything from here on is held (a tool call follows)
}

var hiddenTags = map[string]string{thinkOpen: thinkClose, "<tool_call>": "</tool_call>"}

// feed returns the part of text that may be shown now.
func (f *deltaFilter) feed(text string) string {
	if f.held {
		return ""
	}
	s := f.pending + text
	f.pending = ""
	var out strings.Builder
	for s != "" {
		if f.hidden != "" {
			i := strings.Index(s, f.hidden)
			if i < 0 {
				f.pending = tailPrefix(s, f.hidden)
				return out.String()
			}
			s = s[i+len(f.hidden):]
			f.hidden = ""
			continue
		}
		if f.textCalls && strings.TrimSpace(f.seen+out.String()) == "" && strings.HasPrefix(strings.TrimSpace(s), "{") {
			f.held = true // maybe a bare JSON tool call: wait for the whole answer
			return out.String()
		}
		cut, tag := len(s), ""
		for open := range hiddenTags {
			if open != thinkOpen && !f.textCalls {
				continue
			}
			if i := strings.Index(s, open); i >= 0 && i < cut {
				cut, tag = i, open
			}
		}
		if f.textCalls {
			if i := strings.Index(s, "[TOOL_CALLS]"); i >= 0 && i < cut {
				out.WriteString(s[:i])
				f.held = true
				break
			}
		}
		if tag == "" {
			keep := 0
			for _, open := range []string{thinkOpen, "<tool_call>", "[TOOL_CALLS]"} {
				keep = max(keep, len(tailPrefix(s, open)))
			}
			out.WriteString(s[:len(s)-keep])
			f.pending = s[len(s)-keep:]
			break
		}
		out.WriteString(s[:cut])
		s = s[cut+len(tag):]
		f.hidden = hiddenTags[tag]
	}
	f.seen += out.String()
	return out.String()
}

// tailPrefix is the longest suffix of s that is a proper prefix of tag.
func tailPrefix(s, tag string) string {
	for n := min(len(tag)-1, len(s)); n > 0; n-- {
		if strings.HasSuffix(s, tag[:n]) {
			return s[len(s)-n:]
		}
	}
	return ""
}
