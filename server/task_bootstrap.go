package server

import (
	"context"

	"github.com/opsagent/opsagent/scheduler"
	"github.com/opsagent/opsagent/store"
)

// bootstrapTaskFromTemplate is onboarding's first task: the template's
// prompt and schedule, enabled, in the project bootstrap just created, inside
// bootstrap's own transaction so a failure leaves nothing half made.
func (s *Server) bootstrapTaskFromTemplate(ctx context.Context, tx *store.Tx, orgID, projectID, userID, template string) (string, error) {
	tpl, ok := findTemplate(template)
	if !ok {
		return "", invalid("Unknown task template", "value_error", "body", "task_template")
	}
	t := &store.Task{OrgID: orgID, ProjectID: projectID, Name: tpl.Name, Description: tpl.Description, Prompt: tpl.Prompt,
		AgentType: tpl.AgentType, Schedule: tpl.Schedule, Timezone: "UTC", Enabled: true, MissedFirePolicy: tpl.MissedFirePolicy,
		OverlapPolicy: tpl.OverlapPolicy, TimeoutSeconds: tpl.TimeoutSeconds, MaxSteps: tpl.MaxSteps, TemplateID: tpl.ID, CreatedBy: userID}
	if err := store.CreateTaskTx(ctx, tx, t, scheduler.NextRun); err != nil {
		return "", err
	}
	return t.ID, nil
}
