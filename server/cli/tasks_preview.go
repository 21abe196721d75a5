package cli

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// taskPreview is what a task will do before it runs (server/task_preview.go).
type taskPreview struct {
	TaskID    *string `json:"task_id"`
	Name      string  `json:"name"`
	AgentType string  `json:"agent_type"`
	Enabled   bool    `json:"enabled"`
	Schedule  string  `json:"schedule"`
	Timezone  string  `json:"timezone"`
	NextRuns  []struct {
		At    time.Time `json:"at"`
		Local string    `json:"local"`
	} `json:"next_runs"`
	Prompt string `json:"prompt"`
	Rules  []struct {
		ID    string `json:"id"`
		Kind  string `json:"kind"`
		Text  string `json:"text"`
		Scope string `json:"scope"`
	} `json:"rules"`
	Budget struct {
		MaxSteps       int     `json:"max_steps"`
		TimeoutSeconds int     `json:"timeout_seconds"`
		MaxCostUSD     float64 `json:"max_cost_usd"`
	} `json:"budget"`
	Warnings []string `json:"warnings"`
}

func (a *app) taskPreviewCmd() *cobra.Command {
	var tf taskFields
	var count int
	cmd := &cobra.Command{Use: "preview (ID | --name NAME --prompt PROMPT [flags])",
		Short: "Show what a task will do before it runs: next runs, the prompt the agent gets, the rules and budget it runs under",
		Args:  rangeArgs(0, 1),
		Example: `  opsagent tasks preview 0192f0d1-...
  opsagent tasks preview --name "Nightly disk check" --prompt "Check disk usage" --schedule "0 2 * * *" --timezone Europe/Paris`,
		RunE: func(cmd *cobra.Command, args []string) error {
			draft := tf.body(cmd)
			if len(args) == 1 && len(draft) > 0 {
				return usageErrorf(cmd, "give a task id or a draft's flags, not both")
			}
			if len(args) == 0 && tf.template == "" && (tf.name == "" || tf.prompt == "") {
				return usageErrorf(cmd, "give a task id, or a draft with --name and --prompt (or --template)")
			}
			if count < 1 || count > 50 {
				return usageErrorf(cmd, "--count must be 1 to 50")
			}
			c, err := a.projectClient(cmd.Context())
			if err != nil {
				return err
			}
			q := url.Values{}
			q.Set("count", strconv.Itoa(count))
			var p taskPreview
			var raw json.RawMessage
			if len(args) == 1 {
				err = c.call(cmd.Context(), "GET", "/api/tasks/"+url.PathEscape(args[0])+"/preview", q, nil, &p, &raw)
			} else {
				err = c.call(cmd.Context(), "POST", "/api/tasks/preview", q, draft, &p, &raw)
			}
			if err != nil {
				return err
			}
			var ids []string // a draft has no id to print
			if p.TaskID != nil {
				ids = append(ids, *p.TaskID)
			}
			return a.emit(raw, ids, func() { a.printTaskPreview(&p) })
		}}
	tf.add(cmd, true)
	cmd.Flags().IntVar(&count, "count", 5, "how many upcoming runs to list (1-50)")
	return cmd
}

func (a *app) printTaskPreview(p *taskPreview) {
	state := "enabled"
	if !p.Enabled {
		state = "disabled"
	}
	schedule := "on demand only"
	if p.Schedule != "" {
		schedule = p.Schedule + " (" + p.Timezone + ")"
	}
	budget := fmt.Sprintf("%d steps, %ds", p.Budget.MaxSteps, p.Budget.TimeoutSeconds)
	if p.Budget.MaxCostUSD > 0 {
		budget += ", at most " + money(p.Budget.MaxCostUSD)
	}
	a.out.fields([][2]string{{"task", dash(deref(p.TaskID))}, {"name", p.Name}, {"state", a.out.status(state)},
		{"agent", p.AgentType}, {"schedule", schedule}, {"budget", budget}})
	if len(p.NextRuns) > 0 {
		fmt.Fprintln(a.inv.Stdout)
		rows := make([][]string, len(p.NextRuns))
		for i, r := range p.NextRuns {
			rows[i] = []string{r.Local, r.At.Format(time.RFC3339), ago(r.At)}
		}
		a.out.table([]string{"NEXT RUN", "UTC", "IN"}, rows)
	}
	if len(p.Rules) > 0 {
		fmt.Fprintln(a.inv.Stdout)
		rows := make([][]string, len(p.Rules))
		for i, r := range p.Rules {
			rows[i] = []string{r.ID, r.Scope, r.Kind, clip(r.Text, 60)}
		}
		a.out.table([]string{"RULE", "SCOPE", "KIND", "TEXT"}, rows)
	}
	for _, w := range p.Warnings {
		fmt.Fprintf(a.inv.Stdout, "%s %s\n", a.out.paint(yellow, "warning:"), w)
	}
	fmt.Fprintf(a.inv.Stdout, "\n%s\n%s\n", a.out.paint(bold, "Prompt the agent receives:"), strings.TrimRight(p.Prompt, "\n"))
}
