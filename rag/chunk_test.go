package rag

import (
	"slices"
	"strings"
	"testing"
)

func TestMarkdownIsSplitAtHeadings(t *testing.T) {
	body := "Intro before any heading.\n\n" +
		"# Database runbook\n\n" +
		"## Backups\nNightly pg_dump to S3.\n\n" +
		"### Restore\nUse pg_restore.\n\n" +
		"```sh\n# not a heading: a shell comment\npg_restore -d app dump.sql\n```\n\n" +
		"## Replication ##\nStreaming replication with one standby.\n" +
		"#hashtag is not a heading\n" +
		"## Empty\n" +
		"# Appendix\nLinks.\n"
	c := chunker{max: 1500, overlap: 150}
	title, chunks := c.split("db.md", "", body)
	if title != "Database runbook" {
		t.Fatalf("title: got %q", title)
	}
	type want struct {
		headings string
		contains string
	}
	wants := []want{
		{"", "Intro before"},
		{"Database runbook > Backups", "pg_dump"},
		{"Database runbook > Backups > Restore", "# not a heading"},
		{"Database runbook > Replication", "#hashtag"},
		{"Appendix", "Links."},
	}
	if len(chunks) != len(wants) {
		for _, ch := range chunks {
			t.Logf("%q: %q", ch.Headings, ch.Text)
		}
		t.Fatalf("got %d chunks, want %d", len(chunks), len(wants))
	}
	for i, w := range wants {
		if got := strings.Join(chunks[i].Headings, " > "); got != w.headings || !strings.Contains(chunks[i].Text, w.contains) {
			t.Errorf("chunk %d: got %q %q, want %q containing %q", i, got, chunks[i].Text, w.headings, w.contains)
		}
	}
	if strings.Contains(chunks[2].Text, "Replication") {
		t.Errorf("the Restore chunk runs into the next section: %q", chunks[2].Text)
	}
}

func TestLongSectionsAreCutWithOverlap(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Big\n\n")
	for i := range 40 {
		b.WriteString(strings.Repeat("word ", 10))
		b.WriteString("sentence" + strings.Repeat("x", i%3) + " end.\n\n")
	}
	b.WriteString(strings.Repeat("a", 900) + "\n\n") // one word longer than a chunk
	c := chunker{max: 400, overlap: 80}
	_, chunks := c.split("big.md", "", b.String())
	if len(chunks) < 5 {
		t.Fatalf("got %d chunks, want the section cut into several", len(chunks))
	}
	for i, ch := range chunks {
		if len(ch.Text) > c.max {
			t.Errorf("chunk %d is %d bytes, cap %d", i, len(ch.Text), c.max)
		}
		if !slices.Equal(ch.Headings, []string{"Big"}) {
			t.Errorf("chunk %d headings %q", i, ch.Headings)
		}
	}
	// Consecutive pieces of prose share text: the start of one repeats the end of the previous.
	first, second := chunks[0].Text, chunks[1].Text
	head := second[:20]
	if !strings.Contains(first, head) {
		t.Errorf("no overlap: %q does not end with the start of %q", first[len(first)-100:], head)
	}
	var joined strings.Builder
	for _, ch := range chunks {
		joined.WriteString(ch.Text)
	}
	if got := strings.Count(joined.String(), "a"); got < 900 {
		t.Errorf("text lost when cutting a long word: %d a's", got)
	}
}

func TestTextFilesAreOneSectionTitledByName(t *testing.T) {
	c := chunker{max: 1500, overlap: 150}
	title, chunks := c.split("notes/oncall-rota.txt", "", "# not a heading in a text file\nMonday: Alice.\n")
	if title != "oncall-rota" || len(chunks) != 1 || len(chunks[0].Headings) != 0 {
		t.Fatalf("got title %q chunks %+v", title, chunks)
	}
	title, _ = c.split("x.txt", "From front matter", "text")
	if title != "From front matter" {
		t.Fatalf("front matter title: got %q", title)
	}
}

func TestFrontMatter(t *testing.T) {
	for _, c := range []struct {
		in   string
		tags []string
	}{
		{"---\ntags: [a, b]\n---\nbody", []string{"a", "b"}},
		{"---\ntags: a, b\n---\nbody", []string{"a", "b"}},
		{"---\ntags:\n  - a\n  - b\n...\nbody", []string{"a", "b"}},
		{"---\r\ntags: [a]\r\n---\r\nbody", []string{"a"}},
		{"no front matter\n---\ntags: [a]\n---\n", nil},
		{"---\ntags: [a]\nnever closed", nil},
	} {
		block, _, _ := splitFrontMatter([]byte(c.in))
		m, err := parseMeta(block)
		if err != nil || !slices.Equal(m.Tags, c.tags) {
			t.Errorf("%q: got %v, %v, want %v", c.in, m.Tags, err, c.tags)
		}
	}
	out, err := withTags([]byte("---\nowner: sre # team\ntags: [old]\n---\n# Body\n"), []string{"new", "x"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "---\nowner: sre # team\ntags: [new, x]\n---\n# Body\n"; string(out) != want {
		t.Fatalf("got %q, want %q", out, want)
	}
	out, _ = withTags([]byte("---\ntags: [old]\n---\nbody"), []string{})
	if block, body, _ := splitFrontMatter(out); strings.Contains(string(block), "old") || string(body) != "body" {
		t.Fatalf("clearing tags: got %q", out)
	}
	if out, _ := withTags([]byte("plain"), nil); string(out) != "plain" {
		t.Fatalf("no tags, no block: got %q", out)
	}
}
