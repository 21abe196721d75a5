package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/opsagent/opsagent/rag"
	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/knowledge"
	"github.com/opsagent/opsagent/store"
)

// The agent's own tools over the project's knowledge: search_knowledge
// (runbooks, facts, incidents, memories), remember and recall. Each is bound
// to the run's org and project when the run starts, so the model can never
// name another tenant.

const (
	searchKnowledgeSchema = `{"type":"object","properties":{
		"query":{"type":"string","minLength":1,"maxLength":500,"description":"what to look for"},
		"collection":{"type":"string","enum":["runbooks","facts","incidents","memories"],"description":"limit the search to one collection"},
		"limit":{"type":"integer","minimum":1,"maximum":20,"description":"hits to return (default 5)"}},
		"required":["query"],"additionalProperties":false}`
	rememberSchema = `{"type":"object","properties":{
		"key":{"type":"string","minLength":1,"maxLength":120,"description":"stable name, e.g. db.primary; the same key replaces the memory"},
		"text":{"type":"string","minLength":1,"maxLength":8000},
		"title":{"type":"string","maxLength":200},
		"scope":{"type":"string","enum":["project","org"],"description":"project (default) or the whole organization"}},
		"required":["key","text"],"additionalProperties":false}`
	recallSchema = `{"type":"object","properties":{
		"query":{"type":"string","minLength":1,"maxLength":500},
		"limit":{"type":"integer","minimum":1,"maximum":20}},
		"required":["query"],"additionalProperties":false}`
)

func knowledgeTools(kb *knowledge.Base, info RunInfo) []agent.Tool {
	return []agent.Tool{
		agent.FuncTool{IsReadOnly: true, Definition: llm.ToolSpec{Name: "search_knowledge",
			Description: "Search the project's knowledge base (runbooks, facts, past incidents, memories) and return the best matching passages.",
			Parameters:  json.RawMessage(searchKnowledgeSchema)},
			Fn: func(ctx context.Context, args json.RawMessage) (string, error) {
				var a struct {
					Query, Collection string
					Limit             int
				}
				if err := json.Unmarshal(args, &a); err != nil {
					return "", err
				}
				q := rag.Query{Text: a.Query, Limit: a.Limit}
				if q.Limit == 0 {
					q.Limit = 5
				}
				if a.Collection != "" {
					q.Collections = []string{a.Collection}
				}
				hits, err := kb.Search(ctx, info.OrgID, info.ProjectID, q)
				if err != nil {
					return "", err
				}
				return formatHits(hits), nil
			}},
		agent.FuncTool{Definition: llm.ToolSpec{Name: "remember",
			Description: "Save a durable fact for later sessions (replaces the memory of the same key).",
			Parameters:  json.RawMessage(rememberSchema)},
			Fn: func(ctx context.Context, args json.RawMessage) (string, error) {
				var a struct{ Key, Text, Title, Scope string }
				if err := json.Unmarshal(args, &a); err != nil {
					return "", err
				}
				m, created, err := kb.Remember(ctx, knowledge.RememberInput{OrgID: info.OrgID, ProjectID: info.ProjectID,
					Scope: a.Scope, Key: a.Key, Title: a.Title, Text: a.Text, SessionID: info.SessionID, ActorID: info.UserID})
				if err != nil {
					return "", toolError(err)
				}
				verb := "updated"
				if created {
					verb = "saved"
				}
				return fmt.Sprintf("memory %q %s (%s scope)", m.Key, verb, m.Scope), nil
			}},
		agent.FuncTool{IsReadOnly: true, Definition: llm.ToolSpec{Name: "recall",
			Description: "Find memories saved earlier that match the query.",
			Parameters:  json.RawMessage(recallSchema)},
			Fn: func(ctx context.Context, args json.RawMessage) (string, error) {
				var a struct {
					Query string
					Limit int
				}
				if err := json.Unmarshal(args, &a); err != nil {
					return "", err
				}
				if a.Limit == 0 {
					a.Limit = 5
				}
				ms, err := kb.Recall(ctx, info.OrgID, info.ProjectID, a.Query, a.Limit)
				if err != nil {
					return "", toolError(err)
				}
				if len(ms) == 0 {
					return "no memories match", nil
				}
				var b strings.Builder
				for _, m := range ms {
					fmt.Fprintf(&b, "- %s (%s): %s\n", m.Key, m.Scope, m.Text)
				}
				return b.String(), nil
			}},
	}
}

func formatHits(hits []rag.Hit) string {
	if len(hits) == 0 {
		return "no matching documents"
	}
	var b strings.Builder
	for i, h := range hits {
		where := h.Collection + "/" + h.Name
		if len(h.Headings) > 0 {
			where += " > " + strings.Join(h.Headings, " > ")
		}
		fmt.Fprintf(&b, "%d. %s (%s)\n%s\n\n", i+1, h.Title, where, strings.TrimSpace(h.Snippet))
	}
	return b.String()
}

// toolError keeps a store error's message (written for people, fine for
// the model) and hides anything else.
func toolError(err error) error {
	if e, ok := err.(*store.Error); ok {
		return fmt.Errorf("%s", e.Message)
	}
	return err
}
