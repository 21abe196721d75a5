package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/runner"
	"github.com/opsagent/opsagent/store"
)

// POST /api/commands runs run_command outside an agent session, for MCP
// clients and scripts, on the same path as the agent's calls: the gate
// (must_never rules, offline targets), approvals (a single-use approval of
// exactly these arguments, with no session), then the guarded tool, which
// checks the rules again, injects the named secrets and masks every
// secret in the output. A call that needs a person answers 202 with the
// approval's id; once approved, the same request with that approval_id
// runs it once.

// CommandRun is one run_command call.
type CommandRun struct {
	Target         string   `json:"target" validate:"required,min=1,max=256" doc:"a connector name, a label selector (env=prod,role=db) or server"`
	Command        string   `json:"command" validate:"required,min=1,max=16384"`
	Secrets        []string `json:"secrets" validate:"max=32" doc:"names of secrets to inject as environment variables"`
	TimeoutSeconds int      `json:"timeout_seconds" validate:"min=0,max=3600"`
	ApprovalID     string   `json:"approval_id" validate:"max=64" doc:"the approval a previous 202 answer named"`
}

// CommandRunOut is how the call ended.
type CommandRunOut struct {
	Status     string `json:"status" doc:"completed, approval_required, denied or refused"`
	Output     string `json:"output" doc:"exit code, hosts, duration and the (masked, capped) output; or why it did not run"`
	IsError    bool   `json:"is_error"`
	ApprovalID string `json:"approval_id,omitempty"`
}

func (s *Server) commandRoutes() []*Route {
	return []*Route{
		{Method: "POST", Path: "/api/commands", Summary: "Run a command on connectors (or the server) through rules and approvals, like the agent's run_command",
			Tags: []string{"connectors"}, Auth: AuthAny, Perm: PermTasksRun, Project: true, Body: CommandRun{}, Resp: CommandRunOut{},
			Status: 200, ErrorResp: map[int]any{202: CommandRunOut{}}, MaxBody: 64 << 10, Handle: s.handleRunCommand},
	}
}

// handleRunCommand is POST /api/commands.
func (s *Server) handleRunCommand(c *Ctx) error {
	var req CommandRun
	if err := c.Bind(&req); err != nil {
		return err
	}
	if req.ApprovalID != "" && !store.ValidID(req.ApprovalID) {
		return invalid("Input should be a valid UUID", "uuid_parsing", "body", "approval_id")
	}
	fields := map[string]any{"command": req.Command, "target": req.Target}
	if len(req.Secrets) > 0 {
		fields["secrets"] = req.Secrets
	}
	if req.TimeoutSeconds > 0 {
		fields["timeout_seconds"] = req.TimeoutSeconds
	}
	args, _ := json.Marshal(fields)
	ctx := c.Context()
	run := runner.RunInfo{OrgID: c.OrgID(), ProjectID: c.ProjectID(), UserID: c.ID.UserID, Source: "api", TriggerSource: "manual"}
	const name = "run_command"
	t := s.policyToolByName(ctx, run, name)
	if t == nil {
		return errors.New("run_command is not available")
	}
	call := agent.Call{ID: "api_" + store.NewID(), Name: name, Arguments: args}
	d := s.gateFor(run).Check(ctx, call)
	switch d.Verdict {
	case agent.VerdictBlock:
		c.Audit("command.refused", "failure", "project", run.ProjectID, map[string]any{"target": req.Target, "command": req.Command, "reason": d.Reason})
		return c.JSON(http.StatusForbidden, CommandRunOut{Status: "refused", Output: "refused and not run: " + d.Reason, IsError: true})
	case agent.VerdictNeedApproval:
		if req.ApprovalID != "" {
			a, err := s.db.FindApproval(ctx, run.OrgID, run.ProjectID, req.ApprovalID)
			if err != nil {
				return err
			}
			switch a.Status {
			case store.ApprovalPending:
				return c.JSON(http.StatusAccepted, CommandRunOut{Status: "approval_required", ApprovalID: a.ID,
					Output: "still waiting for a person to approve approval " + a.ID})
			case store.ApprovalApproved:
			default:
				return c.JSON(http.StatusForbidden, CommandRunOut{Status: "denied", IsError: true,
					Output: "approval " + a.ID + " is " + a.Status + ": the command did not run"})
			}
		} else {
			id, err := s.openToolApproval(ctx, run, &agent.Pending{Call: call, Reason: d.Reason})
			if err != nil {
				return err
			}
			return c.JSON(http.StatusAccepted, CommandRunOut{Status: "approval_required", ApprovalID: id,
				Output: "a person must approve this command (approval " + id + "): " + strings.TrimSuffix(d.Reason, ".") +
					". Once it is approved, send the same request with approval_id to run it once."})
		}
	}
	out, err := guardedTool{Tool: t, s: s, run: run}.Run(ctx, args)
	res := CommandRunOut{Status: "completed", Output: out}
	var refused *agent.Refusal
	switch {
	case errors.As(err, &refused):
		res.Status, res.Output, res.IsError = "refused", "refused and not run: "+refused.Reason, true
	case err != nil:
		res.Output, res.IsError = "error: "+err.Error(), true
	}
	c.Audit("command.run", "success", "project", run.ProjectID, map[string]any{"target": req.Target, "command": req.Command, "status": res.Status})
	return c.JSON(http.StatusOK, res)
}
