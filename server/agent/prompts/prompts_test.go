package prompts

import (
	"strings"
	"testing"
)

// Every agent type has a versioned prompt, and the method teaches the steps.
func TestEveryAgentTypeHasAVersionedPrompt(t *testing.T) {
	for _, typ := range []string{"general", "sre", "security", "cost", "kubernetes", "database"} {
		p := For(typ)
		if p.Version != typ+"/1+method/1" || p.Role == "" {
			t.Fatalf("%s: version %q role %q", typ, p.Version, p.Role)
		}
	}
	if p := For("nonsense"); !strings.HasPrefix(p.Version, "general/") {
		t.Fatalf("unknown type: %q", p.Version)
	}
	m := For("sre").Method
	for _, step := range []string{"Scope the impact", "Check what changed", "Form hypotheses", "cheapest read-only check", "Stop when", "Never change anything without approval"} {
		if !strings.Contains(m, step) {
			t.Fatalf("method lacks %q", step)
		}
	}
}
