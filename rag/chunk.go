package rag

import (
	"path"
	"regexp"
	"strings"
	"unicode/utf8"
)

// chunk is one indexed piece of a document: a section of Markdown under its heading path, or a run of
// paragraphs of plain text.
type chunk struct {
	Headings []string
	Text     string
}

type chunker struct {
	max     int // hard cap of a chunk's text, in bytes
	overlap int // bytes of the previous piece repeated at the start of the next one of the same section
}

var (
	atxHeading = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	fenceOpen  = regexp.MustCompile("^ {0,3}(```+|~~~+)")
)

// split cuts a document body into chunks. Markdown is cut at ATX headings ("# ..." to "###### ..."),
// ignoring lines inside fenced code blocks; text files are one section. The title is the front matter's,
// else the first level-1 heading, else the file name without its extension.
func (c chunker) split(name, fmTitle, body string) (title string, chunks []chunk) {
	title = fmTitle
	base := strings.TrimSuffix(path.Base(name), path.Ext(name))
	var sections []chunk
	if path.Ext(name) == ".txt" {
		sections = []chunk{{Text: body}}
	} else {
		var h1 string
		sections, h1 = markdownSections(body)
		if title == "" {
			title = h1
		}
	}
	if title == "" {
		title = base
	}
	for _, s := range sections {
		for _, piece := range c.pieces(s.Text) {
			chunks = append(chunks, chunk{Headings: s.Headings, Text: piece})
		}
	}
	return title, chunks
}

// markdownSections returns the non-blank sections of a Markdown body with their heading paths, and the
// text of the first level-1 heading.
func markdownSections(body string) (sections []chunk, h1 string) {
	type level struct {
		depth int
		text  string
	}
	var (
		stack []level
		cur   strings.Builder
		fence string
	)
	flush := func() {
		if text := strings.TrimSpace(cur.String()); text != "" {
			hs := make([]string, 0, len(stack))
			for _, l := range stack {
				hs = append(hs, l.text)
			}
			sections = append(sections, chunk{Headings: hs, Text: text})
		}
		cur.Reset()
	}
	for line := range strings.Lines(body) {
		trimmed := strings.TrimRight(line, "\r\n")
		if fence != "" {
			if strings.HasPrefix(strings.TrimLeft(trimmed, " "), fence) {
				fence = ""
			}
			cur.WriteString(line)
			continue
		}
		if m := fenceOpen.FindStringSubmatch(trimmed); m != nil {
			fence = m[1]
			cur.WriteString(line)
			continue
		}
		m := atxHeading.FindStringSubmatch(trimmed)
		if m == nil {
			cur.WriteString(line)
			continue
		}
		flush()
		depth, text := len(m[1]), strings.TrimSpace(m[2])
		for len(stack) > 0 && stack[len(stack)-1].depth >= depth {
			stack = stack[:len(stack)-1]
		}
		stack = append(stack, level{depth, text})
		if depth == 1 && h1 == "" {
			h1 = text
		}
	}
	flush()
	return sections, h1
}

// pieces cuts one section into parts of at most c.max bytes: at blank lines first, then at spaces, then
// anywhere on a rune boundary. Each part after the first starts with up to c.overlap bytes of the end of the
// previous one, so a sentence cut in two is still found whole in one of them.
func (c chunker) pieces(text string) []string {
	text = strings.TrimSpace(text)
	if len(text) <= c.max {
		if text == "" {
			return nil
		}
		return []string{text}
	}
	var units []string
	for para := range strings.SplitSeq(text, "\n\n") {
		if para = strings.TrimSpace(para); para == "" {
			continue
		}
		if len(para) <= c.max-c.overlap {
			units = append(units, para)
			continue
		}
		units = append(units, cutWords(para, c.max-c.overlap)...)
	}
	var (
		out []string
		cur strings.Builder
	)
	for _, u := range units {
		if cur.Len() > 0 && cur.Len()+2+len(u) > c.max {
			prev := cur.String()
			out = append(out, prev)
			cur.Reset()
			if tail := overlapTail(prev, c.overlap); len(tail)+2+len(u) <= c.max {
				cur.WriteString(tail)
			}
		}
		if cur.Len() > 0 {
			cur.WriteString("\n\n")
		}
		cur.WriteString(u)
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// cutWords splits s into parts of at most max bytes at whitespace, cutting inside a word only when one word
// alone is longer than max.
func cutWords(s string, max int) []string {
	var out []string
	for len(s) > max {
		cut := strings.LastIndexAny(s[:max+1], " \t\n")
		if cut <= 0 {
			cut = max
			for cut > 0 && !utf8.RuneStart(s[cut]) {
				cut--
			}
		}
		out = append(out, strings.TrimSpace(s[:cut]))
		s = strings.TrimSpace(s[cut:])
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// overlapTail is the end of s, at most n bytes, starting at a word boundary.
func overlapTail(s string, n int) string {
	if n <= 0 || len(s) <= n {
		return ""
	}
	t := s[len(s)-n:]
	if i := strings.IndexAny(t, " \t\n"); i >= 0 {
		return strings.TrimSpace(t[i:])
	}
	return ""
}
