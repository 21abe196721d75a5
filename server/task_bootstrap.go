package server

import "github.com/opsagent/opsagent/store"

// bootstrapTask is onboarding's first task: the template's prompt and
// schedule, enabled; store.Bootstrap creates it in the new project, in the
// bootstrap's own transaction.
func bootstrapTask(template, userID string) (*store.Task, error) {
	tpl, ok := findTemplate(template)
	if !ok {
		return nil, invalid("Unknown task template", "value_error", "body", "task_template")
	}
	return &store.Task{Name: tpl.Name, Description: tpl.Description, Prompt: tpl.Prompt,
		AgentType: tpl.AgentType, Schedule: tpl.Schedule, Timezone: "UTC", Enabled: true, MissedFirePolicy: tpl.MissedFirePolicy,
		OverlapPolicy: tpl.OverlapPolicy, TimeoutSeconds: tpl.TimeoutSeconds, MaxSteps: tpl.MaxSteps, TemplateID: tpl.ID, CreatedBy: userID}, nil
}
