package billing

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/store"
)

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"": ModeOff, "off": ModeOff, "showback": ModeShowback, "stripe": ModeStripe} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q): got %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseMode("paypal"); err == nil {
		t.Error("ParseMode(paypal): no error")
	}
}

// Operator plans replace built-ins of the same id, keep their order, and
// are refused with a reason naming the plan when they are malformed.
func TestCatalogFromFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plans.json")
	if err := os.WriteFile(path, []byte(`[{"id":"free","name":"Free (ours)","limits":{"projects":1}},
		{"id":"gold","limits":{"members":9},"features":["mcp"]}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	ops, err := LoadPlansFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := NewCatalog(ops)
	if err != nil {
		t.Fatal(err)
	}
	free, _ := cat.Get("free")
	if free.Name != "Free (ours)" || free.Limits[store.QuotaProjects] != 1 || free.Builtin {
		t.Fatalf("free not replaced: %+v", free)
	}
	if len(free.Features) != len(Features) {
		t.Fatalf("a plan without features should have them all: %v", free.Features)
	}
	gold, _ := cat.Get("gold")
	if gold.Name != "gold" || !gold.HasFeature("mcp") || gold.HasFeature("connectors") {
		t.Fatalf("gold: %+v", gold)
	}
	if ids := len(cat.All()); ids != len(Builtin())+1 {
		t.Fatalf("got %d plans, want the built-ins plus gold", ids)
	}
	for _, bad := range []struct{ json, want string }{
		{`[{"id":"Bad Id"}]`, "plan id"},
		{`[{"id":"x","limits":{"seats":3}}]`, `unknown limit "seats"`},
		{`[{"id":"x","limits":{"projects":-1}}]`, "must not be negative"},
		{`[{"id":"x","features":["teleport"]}]`, `unknown feature "teleport"`},
		{`[{"id":"x","stripe_meters":{"agent_runs":{"event_name":"e"}}}]`, "stripe_meters"},
		{`[{"id":"x","unit_prices_usd":{"seats":1}}]`, "unit_prices_usd"},
	} {
		var plans []*Plan
		if err := os.WriteFile(path, []byte(bad.json), 0o600); err != nil {
			t.Fatal(err)
		}
		if plans, err = LoadPlansFile(path); err == nil {
			_, err = NewCatalog(plans)
		}
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: got %v, want an error containing %q", bad.json, err, bad.want)
		}
	}
}
