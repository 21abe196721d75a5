package server

import (
	"context"
	"encoding/json"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/runner"
)

// RecordShadowForTest runs the gate's shadow recording for one call in a
// project, as if an agent run had made it (the console test has no model).
func (s *Server) RecordShadowForTest(orgID, projectID, tool, args string) {
	ctx := context.Background()
	run := runner.RunInfo{OrgID: orgID, ProjectID: projectID}
	t := s.policyToolByName(ctx, run, tool)
	d, err := s.evaluateCall(ctx, run, t, tool, json.RawMessage(args))
	if err != nil {
		panic(err)
	}
	s.recordShadow(ctx, run, t, agent.Call{Name: tool, Arguments: json.RawMessage(args)}, d)
}
