package rag

import (
	"bytes"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// meta is what a document's front matter tells the index.
type meta struct {
	Title string
	Tags  []string
}

// splitFrontMatter separates a leading "---" YAML block from the body. ok is false when the file has no
// complete block; the whole file is then the body.
func splitFrontMatter(content []byte) (block, body []byte, ok bool) {
	rest, found := bytes.CutPrefix(content, []byte("---\n"))
	if !found {
		if rest, found = bytes.CutPrefix(content, []byte("---\r\n")); !found {
			return nil, content, false
		}
	}
	for off := 0; off <= len(rest); {
		end := bytes.IndexByte(rest[off:], '\n')
		line := rest[off:]
		next := len(rest)
		if end >= 0 {
			line = rest[off : off+end]
			next = off + end + 1
		}
		if t := string(bytes.TrimRight(line, "\r \t")); t == "---" || t == "..." {
			return rest[:off], rest[next:], true
		}
		if end < 0 {
			break
		}
		off = next
	}
	return nil, content, false
}

// parseMeta reads title and tags from a front-matter block. Tags may be a YAML list or one comma-separated
// string, so "tags: [a, b]", "tags: a, b" and a block list all work for people editing by hand.
func parseMeta(block []byte) (meta, error) {
	var m meta
	if len(bytes.TrimSpace(block)) == 0 {
		return m, nil
	}
	var raw struct {
		Title string    `yaml:"title"`
		Tags  yaml.Node `yaml:"tags"`
	}
	if err := yaml.Unmarshal(block, &raw); err != nil {
		return m, fmt.Errorf("front matter: %w", err)
	}
	m.Title = strings.TrimSpace(raw.Title)
	switch raw.Tags.Kind {
	case 0:
	case yaml.ScalarNode:
		for t := range strings.SplitSeq(raw.Tags.Value, ",") {
			if t = strings.TrimSpace(t); t != "" {
				m.Tags = append(m.Tags, t)
			}
		}
	case yaml.SequenceNode:
		for _, n := range raw.Tags.Content {
			if n.Kind != yaml.ScalarNode {
				return m, fmt.Errorf("front matter: tags must be a list of strings")
			}
			m.Tags = append(m.Tags, n.Value)
		}
	default:
		return m, fmt.Errorf("front matter: tags must be a list of strings")
	}
	return m, nil
}

// withTags returns content whose front matter carries exactly tags, keeping every other key of an existing
// block. A document without tags and without a block is returned unchanged.
func withTags(content []byte, tags []string) ([]byte, error) {
	block, body, ok := splitFrontMatter(content)
	var doc yaml.Node
	if ok && len(bytes.TrimSpace(block)) > 0 {
		if err := yaml.Unmarshal(block, &doc); err != nil {
			return nil, fmt.Errorf("front matter: %w", err)
		}
	}
	if doc.Kind == 0 {
		if len(tags) == 0 {
			return body, nil
		}
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("front matter: not a mapping")
	}
	seq := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, t := range tags {
		seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: t})
	}
	replaced := false
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "tags" {
			root.Content[i+1] = seq
			replaced = true
		}
	}
	if !replaced {
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "tags"}, seq)
	}
	var buf bytes.Buffer
	buf.WriteString("---\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("front matter: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("front matter: %w", err)
	}
	buf.WriteString("---\n")
	buf.Write(body)
	return buf.Bytes(), nil
}
