package server

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/opsagent/opsagent/server/agent/runner"
	"github.com/opsagent/opsagent/server/tools/shellscan"
	"github.com/opsagent/opsagent/store"
)

// run_command lines are parsed (shellscan) before any rule or approval
// decision: rules match what runs, a must_never rule blocks what cannot be
// proven, and a project may let provably read-only lines run unattended.

const runCommandName = "run_command"

// commandScan is a run_command line as the rules see it.
type commandScan struct {
	a        *shellscan.Analysis
	effects  []shellscan.Effect
	texts    []string // normalized forms text patterns also look at
	readOnly bool
	roWhy    string
	autoOK   bool // the project lets proven read-only lines run without a person
}

func (sc *commandScan) matchesCommand(p *shellscan.Pattern) bool {
	for i := range sc.a.Commands {
		if p.Match(&sc.a.Commands[i], false) {
			return true
		}
	}
	return false
}

func (sc *commandScan) effectNames() []string {
	out := make([]string, 0, len(sc.effects))
	for _, e := range sc.effects {
		out = append(out, e.Category)
	}
	return out
}

func (sc *commandScan) opaqueReasons() []string {
	out := make([]string, 0, len(sc.a.Opaque))
	for _, o := range sc.a.Opaque {
		out = append(out, o.Reason)
	}
	return out
}

// compiledPolicy is a project's command policy, compiled.
type compiledPolicy struct {
	key      string // the policy's content it was compiled from
	auto     bool
	catalog  *shellscan.Catalog
	readOnly *shellscan.ReadOnly
}

// commandPolicies caches compiled policies by project, keyed on the
// policy's content (a frozen test clock can give two versions one time).
type commandPolicies struct{ m sync.Map }

func (s *Server) commandPolicy(ctx context.Context, orgID, projectID string) (*compiledPolicy, error) {
	p, err := s.db.FindCommandPolicy(ctx, orgID, projectID)
	if err != nil {
		return nil, err
	}
	key := fmt.Sprint(p.AutoAllowReadOnly, p.ReadOnlyCommands, p.Effects) // fmt sorts map keys
	if v, ok := s.commandPolicies.m.Load(projectID); ok {
		if c := v.(*compiledPolicy); c.key == key {
			return c, nil
		}
	}
	c, err := compileCommandPolicy(p)
	if err != nil {
		// Stored policies were validated; one that no longer compiles
		// falls back to the built-ins and allows nothing automatically.
		s.log.Warn("policy: command policy does not compile; built-ins used", "project_id", projectID, "err", err)
		c = &compiledPolicy{catalog: shellscan.DefaultCatalog}
		c.readOnly, _ = shellscan.NewReadOnly(nil)
	}
	c.key = key
	s.commandPolicies.m.Store(projectID, c)
	return c, nil
}

func compileCommandPolicy(p *store.CommandPolicy) (*compiledPolicy, error) {
	cat, err := shellscan.NewCatalog(p.Effects)
	if err != nil {
		return nil, err
	}
	ro, err := shellscan.NewReadOnly(p.ReadOnlyCommands)
	if err != nil {
		return nil, err
	}
	return &compiledPolicy{auto: p.AutoAllowReadOnly, catalog: cat, readOnly: ro}, nil
}

// scanCall analyses a run_command line with the project's policy.
func (s *Server) scanCall(ctx context.Context, run runner.RunInfo, line string) (*commandScan, error) {
	pol, err := s.commandPolicy(ctx, run.OrgID, run.ProjectID)
	if err != nil {
		return nil, err
	}
	a := shellscan.Analyze(line)
	sc := &commandScan{a: a, effects: pol.catalog.Effects(a), autoOK: pol.auto}
	sc.readOnly, sc.roWhy = pol.readOnly.Proves(a)
	for _, c := range a.Commands {
		if c.Wrapper {
			continue
		}
		plain := c
		plain.Via, plain.Path = nil, ""
		sc.texts = append(sc.texts, plain.String())
	}
	sc.texts = append(sc.texts, a.Summary())
	return sc, nil
}

// opaqueBlocks: a must_never block rule that can apply to run_command
// blocks a line the analysis cannot prove, unless relaxed (allow_opaque).
func (c *compiledRule) opaqueBlocks(v callView) bool {
	if c.Kind != store.RuleMustNever || c.Effect != store.EffectBlock || c.AllowOpaque || v.Scan == nil || !v.Scan.a.IsOpaque() {
		return false
	}
	return c.Tool == "" || c.Tool == "*" || c.Tool == runCommandName
}

// opaqueReason is what the model reads when an opaque line is refused.
func opaqueReason(c *compiledRule, sc *commandScan) string {
	return "blocked by " + ruleLabel(&c.Rule) + ": the platform cannot prove this command does not break that rule, because " +
		strings.Join(sc.opaqueReasons(), "; ") + ". Parsed as: " + sc.a.Summary() + ". Use a plain command instead: write " +
		"program names literally, without eval, variables or substitutions in command position, inline interpreter code " +
		"(python -c, perl -e) or data piped into a shell. Do not try to reach the same effect another way."
}

// parsedNote says what a line was parsed as, for reasons and results.
func parsedNote(v callView) string {
	if v.Scan == nil {
		return ""
	}
	return " Parsed as: " + v.Scan.a.Summary() + "."
}
