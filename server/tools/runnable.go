package tools

import (
	"context"
	"encoding/json"
	"fmt"
)

// Runnable is a tool that can tell, before anyone is asked to approve a
// call, whether the call could run at all. The policy refuses a call that
// cannot (with CanRun's error as the reason the model reads) instead of
// paging a person for something that would fail once approved.
type Runnable interface {
	CanRun(ctx context.Context, args json.RawMessage) error
}

// CanRun reports whether run_command has somewhere to run this call: the
// server host when the operator allows local commands, or a connector
// connected under the target's name. Arguments that do not parse are left
// to the gate's own argument check.
func (r *RunCommand) CanRun(ctx context.Context, args json.RawMessage) error {
	var a commandArgs
	if err := decode(args, &a); err != nil {
		return nil
	}
	return r.targetReady(ctx, targetOf(a))
}

// targetReady is the "can this target run commands now" check.
func (r *RunCommand) targetReady(ctx context.Context, target string) error {
	if target == TargetServer {
		if r.AllowLocal {
			return nil
		}
		if r.Connected != nil && r.Connected(ctx, target) {
			return nil
		}
		return fmt.Errorf("target %q cannot run commands: running commands on the server host is turned off (the operator "+
			"can enable it with OPSAGENT_ALLOW_LOCAL_COMMANDS) and no connector agent is connected; this command did not run "+
			"and no approval was requested", target)
	}
	if r.Connected != nil && r.Connected(ctx, target) {
		return nil
	}
	return fmt.Errorf("no connector %q: no connector agent of that name is connected to this project, so this command "+
		"did not run and no approval was requested (target %q: %s)", target, TargetServer, r.localState())
}
