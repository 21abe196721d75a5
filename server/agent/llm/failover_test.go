package llm_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// TestChainMovesOnOnlyForTheModelsFault: a long 429, a 503 and a refused
// connection move to the next model at once; a refused request (400) is
// the request's fault and fails as it is.
func TestChainMovesOnOnlyForTheModelsFault(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/v1"
	l.Close() // nothing listens: connection refused

	cases := []struct {
		name  string
		first llmfake.Turn
		url   string
		moves bool
		class llm.ErrorClass
	}{
		{"long_429", llmfake.RateLimited(time.Minute), "", true, llm.ClassRateLimit},
		{"503", llmfake.Always(llmfake.Error(503)), "", true, llm.ClassServer},
		{"refused", llmfake.Turn{}, closed, true, llm.ClassNetwork},
		{"400", llmfake.Error(400), "", false, llm.ClassBadRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			first := llmfake.New(t, c.first)
			second := llmfake.New(t, llmfake.Text("from the fallback"))
			fc := first.Config(llm.ProviderOpenAI)
			fc.Retry.GiveUpAfter = llm.DefaultFailoverRetryAfter
			if c.url != "" {
				fc.BaseURL = c.url
			}
			p1, _ := llm.New(fc)
			sc := second.Config(llm.ProviderOpenAI)
			sc.Model = "second-model"
			p2, _ := llm.New(sc)
			chain := llm.NewChain(0, llm.Member{Provider: p1, Model: llmfake.Model}, llm.Member{Provider: p2, Model: "second-model"})
			resp, err := chain.Stream(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}, nil)
			if !c.moves {
				if llm.ClassOf(err) != c.class || len(second.Requests()) != 0 {
					t.Fatalf("got %v (fallback asked %d times), want %s from the first model", err, len(second.Requests()), c.class)
				}
				return
			}
			if err != nil || resp.Model != "second-model" || resp.Content != "from the fallback" {
				t.Fatalf("got %+v, %v; want the second model's answer", resp, err)
			}
			if len(resp.Failovers) != 1 || resp.Failovers[0].Class != c.class || resp.Failovers[0].To != "second-model" {
				t.Errorf("failovers = %+v, want one of class %s", resp.Failovers, c.class)
			}
			if c.name == "long_429" && len(first.Requests()) != 1 {
				t.Errorf("the first model was asked %d times; a one-minute Retry-After moves on at once", len(first.Requests()))
			}
		})
	}
}
