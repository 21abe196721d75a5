package cli_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/internal/testkit"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// billing usage and billing statement print what the API answers: usage as
// a table or --json, the statement as a table or the server's CSV/JSON
// export byte for byte.
func TestBillingUsageAndStatement(t *testing.T) {
	s := startServer(t, llmfake.Always(llmfake.Text("all good").WithUsage(100, 50)))
	u := s.newUser("billing@example.com")
	env := s.cliEnv(t.TempDir(), u.key)
	ok(t, env, "chat", "check the disk")
	month := time.Now().UTC().Format("2006-01")

	usage := decode[map[string]any](t, ok(t, env, "billing", "usage", "--json").stdout)
	meters, _ := usage["meters"].(map[string]any)
	if usage["period"] != month || meters["agent_runs"] != 1.0 || meters["agent_tokens"] != 150.0 {
		t.Fatalf("billing usage --json: %v", usage)
	}
	if out := ok(t, env, "billing", "usage").stdout; !strings.Contains(out, "agent_tokens") || !strings.Contains(out, "150") {
		t.Fatalf("billing usage table:\n%s", out)
	}
	for _, format := range []string{"csv", "json"} {
		status, want := testkit.Do(t, "GET", s.URL+"/api/billing/statements/"+month+"?format="+format, u.token, "", nil)
		got := ok(t, env, "billing", "statement", "--month", month, "--format", format).stdout
		if format == "json" {
			// The open month's statement is generated on each request.
			g, w := decode[map[string]any](t, got), decode[map[string]any](t, string(want))
			delete(g, "generated_at")
			delete(w, "generated_at")
			got, want = fmt.Sprint(g), []byte(fmt.Sprint(w))
		}
		if status != 200 || got != string(want) {
			t.Fatalf("statement --format %s differs from the API's export (%d):\n%s\nwant:\n%s", format, status, got, want)
		}
	}
	if out := ok(t, env, "billing", "statement").stdout; !strings.Contains(out, "agent_runs") || !strings.Contains(out, "total $") {
		t.Fatalf("statement table:\n%s", out)
	}
	exits(t, 2, "--month must look like 2026-11", env, "billing", "statement", "--month", "11-2026")
	exits(t, 2, "--format must be csv or json", env, "billing", "statement", "--format", "xml")
	exits(t, 2, "needs a subcommand", env, "billing")
}
