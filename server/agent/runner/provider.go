package runner

import (
	"context"

	"github.com/opsagent/opsagent/server/agent/llm"
)

// Provider is the LLM an org's one-off model calls use (postmortem
// drafts), resolved exactly as for runs: the org's key, else the server's
// settings; the string is the model.
func (r *Runner) Provider(ctx context.Context, orgID string) (llm.Provider, string, error) {
	return r.provider(ctx, orgID)
}
