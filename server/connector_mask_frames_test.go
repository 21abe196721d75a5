package server_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
	"github.com/opsagent/opsagent/server/connector"
)

// A secret of multi-byte characters is masked whichever byte of it the
// connector's 16 KiB frame boundary falls on, and output that is not UTF-8
// at all is carried byte for byte and masked too: in tool.result, the
// tool.output events, the stored events, the transcript and what the model
// reads. The real binary serves; a connector process of it runs `cat` on
// files that put the secret across the first frame boundary.
func TestConnectorMasksMultiByteSecretsAcrossFrames(t *testing.T) {
	w := newConnWorld(t)
	c := w.c
	c.must(201, "POST", "/api/rules", map[string]any{"kind": "must_always", "description": "routine commands run without asking",
		"effect": "allow", "tool": "run_command", "match_type": "glob", "pattern": "*"})
	secret := "pä€𝄞-wörd-ß€cret" // 2-, 3- and 4-byte characters
	c.must(200, "PUT", "/api/secrets/UNICODE_PW", map[string]any{"value": secret})
	tok, _ := w.enroll(c, "u-1", nil)
	host := w.runHost("u-1", tok)
	w.waitOnline(c, "u-1")

	// leaks names any piece of the secret of four bytes or more still in
	// text: what the old frames left after U+FFFD replaced a split rune.
	leaks := func(text string) string {
		for i := 0; i < len(secret); i++ {
			for j := i + 4; j <= len(secret); j++ {
				if strings.Contains(text, secret[i:j]) {
					return strconv.Quote(secret[i:j])
				}
			}
		}
		return ""
	}
	run := func(name string, content []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(host.dir, name), content, 0o600); err != nil {
			t.Fatal(err)
		}
		sid, evs := w.runCommand(c, map[string]any{"target": "u-1", "command": "cat " + name})
		out, res := toolResult(t, evs)
		if res["is_error"] != false || !strings.Contains(out, "exit code 0") || !strings.Contains(out, "********") {
			t.Fatalf("%s: tool.result is_error %v, output begins %.200q", name, res["is_error"], out)
		}
		var live strings.Builder
		for _, ev := range evs {
			if ev.Type == "tool.output" {
				live.WriteString(ev.Data["text"].(string))
			}
		}
		reqs := w.fake.Requests()
		for where, text := range map[string]string{
			"tool.result":      out,
			"tool.output":      live.String(),
			"stored events":    string(c.must(200, "GET", "/api/sessions/"+sid+"/events", nil).Body),
			"transcript":       string(c.must(200, "GET", "/api/sessions/"+sid+"/transcript", nil).Body),
			"the model's view": messagesText(reqs[len(reqs)-1]),
		} {
			if piece := leaks(text); piece != "" {
				t.Errorf("%s: %s of the secret is in clear in %s", name, piece, where)
			}
		}
		if !strings.Contains(live.String(), "********") {
			t.Errorf("%s: the live output does not show the masked secret", name)
		}
	}
	// A frame ends every ChunkSize bytes: put every byte offset of the
	// secret (and the ones just outside it) on a boundary, three boundaries
	// to a file (an event of the whole output stays under the test's SSE
	// line limit).
	var offsets []int
	for i := -1; i <= len(secret)+1; i++ {
		offsets = append(offsets, i)
	}
	for f := 0; len(offsets) > 0; f++ {
		var b strings.Builder
		for k := 1; k <= 3 && len(offsets) > 0; k++ {
			i := offsets[0]
			offsets = offsets[1:]
			b.WriteString(strings.Repeat("x", k*connector.ChunkSize-i-b.Len()))
			b.WriteString(secret)
		}
		b.WriteString("\n")
		run("at-"+strconv.Itoa(f), []byte(b.String()))
	}
	// Output that is not UTF-8: stray bytes before the secret, and an
	// incomplete character at the end.
	bad := append([]byte{0xff, 0xfe}, strings.Repeat("y", connector.ChunkSize-9)...)
	run("binary", append(append(bad, secret...), 0xc3, '\n'))
}

// messagesText is what the conversation shows the model, without the
// system prompt: the platform's own words there (the tool list says
// "secrets") would match pieces of the test's secret.
func messagesText(r llmfake.Request) string {
	var b strings.Builder
	for _, m := range r.Messages {
		b.WriteString(m.Content + "\n")
		for _, c := range m.ToolCalls {
			b.WriteString(c.Arguments + "\n")
		}
	}
	return b.String()
}
