package server

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/runner"
	"github.com/opsagent/opsagent/server/sandbox"
	"github.com/opsagent/opsagent/server/tools"
	"github.com/opsagent/opsagent/store"
)

// The kernel sandbox of a run_command call is built from its decision:
//   - a line run without a person because it is read-only gets a read-only
//     filesystem (writes only to /dev/null and a private temp dir), its
//     signals scoped to itself, the system D-Bus hidden, and the
//     host-changing calls denied;
//   - a line a person approved (or a rule pre-approved) may write where
//     the host's user may, or only beneath the project's allow-paths when
//     its sandbox profile lists some (sandbox_profile.go), and
//     host-changing calls are denied unless the approval card said "may
//     stop or restart the host";
//   - on top of either, each must_never effect rule the kernel can enforce
//     narrows it: deletes_files (no removal, no truncation), stops_host
//     (host-changing calls denied, signals only within the command, the
//     system D-Bus hidden), runs_downloaded_code (nothing written during
//     the command executes, no network).
//
// Rules with no kernel equivalent keep the parser's decision alone.

// sandboxFor is the profile of one call's decision; allowPaths is the
// project's allow-paths list (sandbox_profile.go).
func sandboxFor(d callDecision, rules []store.Rule, allowPaths []string) sandbox.Profile {
	p := sandbox.Profile{DenyHostStop: true}
	if !d.autoReadOnly && len(allowPaths) > 0 {
		p.WritePaths = append([]string(nil), allowPaths...)
	}
	switch {
	case d.autoReadOnly:
		p.ReadOnly, p.ScopeSignals, p.HideSystemSockets = true, true, true
	case d.verdict.Verdict == agent.VerdictNeedApproval && d.view.Scan != nil && hasEffect(d.view.Scan, "stops_host"):
		// The card showed "may stop or restart the host" and a person
		// approved that: the host-changing calls are theirs to make.
		p.DenyHostStop = false
	}
	for _, r := range rules {
		if r.Kind != store.RuleMustNever || r.Effect != store.EffectBlock || r.MatchType != store.MatchEffect {
			continue
		}
		if r.Tool != "" && r.Tool != "*" && r.Tool != runCommandName {
			continue
		}
		switch r.Pattern {
		case "deletes_files":
			p.NoDelete = true
		case "stops_host":
			// Signals too: a command that may not stop the host may not
			// kill every process on it either (pkill ., kill -9 -1).
			p.DenyHostStop, p.HideSystemSockets, p.ScopeSignals = true, true, true
		case "runs_downloaded_code":
			p.NoExecNew, p.NoNetwork = true, true
		}
	}
	return p
}

// hostStopWarning is what the approval card says of a line that may stop
// the host: approving it is approving that.
const hostStopWarning = "It may stop or restart the host: approving lets it make the host-changing calls the sandbox otherwise denies."

// hostStopNotApproved replaces the warning when the approval given did not
// show it.
const hostStopNotApproved = "The approval did not say it may stop or restart the host, so host-changing calls stay denied."

// hostStopNote is the warning for a decision whose approval lifts the
// host-stop filter ("" for every other decision).
func hostStopNote(d callDecision) string {
	if d.verdict.Verdict != agent.VerdictNeedApproval || d.sandbox.DenyHostStop {
		return ""
	}
	return " " + hostStopWarning
}

// approvedHostStop: the approval a person gave was for a line whose card
// named the stops_host effect, which is when it showed the host-stop
// warning. The effects are computed again when the call runs; a project
// that added a stops_host pattern since the card was shown has not had
// that approved, so the filter stays on. (The subject's effects are read,
// not the reason's text, which quotes the command line.)
func (s *Server) approvedHostStop(ctx context.Context, run runner.RunInfo, approvalID string) bool {
	a, err := s.db.FindApproval(ctx, run.OrgID, run.ProjectID, approvalID)
	if err != nil {
		return false
	}
	var subj ToolCallSubject
	if json.Unmarshal([]byte(a.Subject), &subj) != nil {
		return false
	}
	return slices.Contains(subj.Effects, "stops_host")
}

// allowPathsNote tells the approver when the project's allow-paths cannot
// be held where the line would run (a host without Landlock): approving
// then lets it write wherever the host's user may, and the card says so.
func (s *Server) allowPathsNote(ctx context.Context, run runner.RunInfo, d callDecision, args json.RawMessage) string {
	if d.verdict.Verdict != agent.VerdictNeedApproval || len(d.sandbox.WritePaths) == 0 {
		return ""
	}
	if ok, why := s.readOnlyEnforced(ctx, run, args, d.view.Rendered.Command); !ok {
		return " The project's allow-paths cannot be held there (" + why + "): approving lets it write wherever the host's user may."
	}
	return ""
}

func hasEffect(sc *commandScan, name string) bool {
	for _, e := range sc.effects {
		if e.Category == name {
			return true
		}
	}
	return false
}

// readOnlyEnforced: every host the call would run on has a kernel that
// holds the read-only promise (Landlock). Without it a read-only line is
// not run unattended: it asks a person, and the reason says why.
func (s *Server) readOnlyEnforced(ctx context.Context, run runner.RunInfo, args json.RawMessage, line string) (bool, string) {
	var a struct {
		Target string `json:"target"`
	}
	_ = json.Unmarshal(args, &a)
	if a.Target == "" || a.Target == tools.TargetServer {
		k := s.kernel()
		return k.ReadOnlyEnforced(), "the server host: " + k.Explain()
	}
	hosts, err := s.connectorRemote(run.OrgID, run.ProjectID).Resolve(ctx, a.Target, line)
	if err != nil || len(hosts) == 0 {
		return false, "its target cannot be checked for a sandbox"
	}
	for _, h := range hosts {
		hello := s.connectors.Status(h.ID).Hello
		if hello.Sandbox == nil {
			return false, "the host " + h.Label() + " does not report a kernel sandbox (an older connector)"
		}
		if !hello.Sandbox.ReadOnlyEnforced() {
			return false, "the host " + h.Label() + ": " + hello.Sandbox.Explain()
		}
	}
	return true, ""
}

// kernel is what this server host's kernel offers the sandbox.
func (s *Server) kernel() sandbox.Kernel {
	return sandbox.Probe().WithoutLandlock(s.cfg.SandboxNoLandlock)
}
