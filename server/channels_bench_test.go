package server_test

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// BenchmarkSlackInboundToFirstUpdate: a signed Slack mention in, until the
// bot's first Web API call (the placeholder the answer streams into)
// reaches Slack's fake. The model answers at once and is not on this path:
// the placeholder goes out before the model's first token, so this is the
// server's own overhead (verify, dedupe, session, launch, relay, outbound).
// Messages are sent one after another, each after the previous answer was
// edited in. It reports p50 and p99 in milliseconds.
//
//	go test -run '^$' -bench BenchmarkSlackInboundToFirstUpdate -benchtime 300x ./server/
func BenchmarkSlackInboundToFirstUpdate(b *testing.B) {
	fake := llmfake.New(b, llmfake.Always(llmfake.Text("ok")))
	sf := newSlackFake(b)
	sf.notify = make(chan chatCall, 4096)
	env := newEnv(b, withLLM(fake), allowLocal, func(c *server.Config) {
		c.SlackAPIURL = sf.URL
		c.AgentTurnsPerMinute = 1 << 20
	})
	owner := env.register("bench@example.com")
	owner.Project = owner.must(201, "POST", "/api/projects", map[string]any{"name": "bench"}).JSON()["id"].(string)
	chID := owner.must(201, "POST", "/api/channels", map[string]any{"platform": "slack", "name": "bench", "allow_unlinked": true,
		"credentials": map[string]any{"bot_token": "xoxb-bench", "signing_secret": slackSecret}}).JSON()["id"].(string)

	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ts := fmt.Sprintf("1700001000.%06d", i)
		body := fixture(b, "slack/app_mention.json", map[string]any{"event_id": fmt.Sprintf("EvBench%d", i), "event.ts": ts})
		start := time.Now()
		if r := slackPost(env, chID, body, time.Now(), "application/json", slackSecret, 0); r.Status != 200 {
			b.Fatalf("inbound: %d %s", r.Status, r.Body)
		}
		ref := ""
		for c := range sf.notify {
			if c.Method == "chat.postMessage" && c.Form.Get("thread_ts") == ts {
				lat = append(lat, c.At.Sub(start))
				ref = c.Ref
				break
			}
		}
		// The turn ends (answer edited in) before the next message, so
		// each message is measured alone, not behind the last one's turn.
		for c := range sf.notify {
			if c.Method == "chat.update" && c.Form.Get("ts") == ref {
				break
			}
		}
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}
