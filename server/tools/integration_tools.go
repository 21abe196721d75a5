package tools

import "github.com/opsagent/opsagent/server/agent"

// IntegrationTools are the tools the model is offered for the integration
// kinds present: the read-only queries and, for Alertmanager, the
// change-capable silences (approval-gated by the policy). A run's tools and
// each integration's advertised `tools` both come from here, so the two
// cannot drift apart.
func IntegrationTools(d QueryDeps, kinds map[string]bool) []agent.Tool {
	var out []agent.Tool
	for _, q := range QueryTools(d, kinds) {
		out = append(out, q)
	}
	if kinds["alertmanager"] {
		for _, s := range AlertmanagerSilenceTools(d) {
			out = append(out, s)
		}
	}
	return out
}

// IntegrationToolNames names the tools an integration of one kind provides.
func IntegrationToolNames(kind string) []string {
	names := []string{}
	for _, t := range IntegrationTools(QueryDeps{}, map[string]bool{kind: true}) {
		names = append(names, t.Spec().Name)
	}
	return names
}
