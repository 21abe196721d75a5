package tools

import (
	"context"
	"encoding/json"
	"errors"
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
// server host when the operator allows local commands, or the connected
// connectors the target names (by name or label selector) whose
// server-side allow-list admits the command. Arguments that do not parse
// are left to the gate's own argument check.
func (r *RunCommand) CanRun(ctx context.Context, args json.RawMessage) error {
	var a commandArgs
	if err := decode(args, &a); err != nil {
		return nil
	}
	target := targetOf(a)
	if target == TargetServer {
		if r.AllowLocal {
			return nil
		}
		return errors.New("running commands on the server host is turned off (the operator can enable it with " +
			"OPSAGENT_ALLOW_LOCAL_COMMANDS); name a connector or a label selector as the target. This command did not run " +
			"and no approval was requested")
	}
	if r.Remote == nil {
		return fmt.Errorf("no connector %q: no connector agent serves this project; this command did not run and no "+
			"approval was requested", target)
	}
	if _, err := r.Remote.Resolve(ctx, target, a.Command); err != nil {
		return fmt.Errorf("%v (no approval was requested)", err)
	}
	return nil
}
