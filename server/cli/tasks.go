package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
)

type taskRow struct {
	ID            string     `json:"id"`
	Name          string     `json:"name"`
	Description   string     `json:"description"`
	AgentType     string     `json:"agent_type"`
	Schedule      string     `json:"schedule"`
	Timezone      string     `json:"timezone"`
	Enabled       bool       `json:"enabled"`
	LastRunAt     *time.Time `json:"last_run_at"`
	LastStatus    string     `json:"last_status"`
	LastSessionID *string    `json:"last_session_id"`
	LastError     string     `json:"last_error"`
	NextRunAt     *time.Time `json:"next_run_at"`
	Prompt        string     `json:"prompt"`
	MaxSteps      int        `json:"max_steps"`
	Timeout       int        `json:"timeout_seconds"`
	CreatedAt     time.Time  `json:"created_at"`
}

func (t *taskRow) enabledWord() string {
	if t.Enabled {
		return "enabled"
	}
	return "disabled"
}

func (a *app) tasksCmd() *cobra.Command {
	return group("tasks", "Scheduled and on-demand agent tasks: list, show, preview, create, edit, enable, disable, trigger, runs",
		a.tasksListCmd(), a.taskShowCmd(), a.taskPreviewCmd(), a.taskCreateCmd(), a.taskEditCmd(), a.taskToggleCmd(true), a.taskToggleCmd(false),
		a.taskTriggerCmd(), a.taskRunsCmd())
}

func (a *app) tasksListCmd() *cobra.Command {
	var pf pageFlags
	var search, enabled string
	cmd := &cobra.Command{Use: "list", Short: "List tasks, newest first", Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			q := pf.query()
			if search != "" {
				q.Set("search", search)
			}
			if enabled != "" {
				q.Set("enabled", enabled)
			}
			p, raw, err := getPage[taskRow](cmd.Context(), a, "/api/tasks", q)
			if err != nil {
				return err
			}
			ids := make([]string, len(p.Items))
			rows := make([][]string, len(p.Items))
			for i, t := range p.Items {
				ids[i] = t.ID
				rows[i] = []string{t.ID, clip(t.Name, 32), dash(t.Schedule), a.out.status(t.enabledWord()), a.out.status(dash(t.LastStatus)), when(t.LastRunAt), when(t.NextRunAt)}
			}
			return a.emit(raw, ids, func() {
				a.out.table([]string{"ID", "NAME", "SCHEDULE", "STATE", "LAST", "LAST RUN", "NEXT RUN"}, rows)
				a.more(p)
			})
		}}
	pf.add(cmd, 25)
	cmd.Flags().StringVar(&search, "search", "", "only tasks whose name, description or prompt contains this")
	cmd.Flags().StringVar(&enabled, "enabled", "", "true or false: only enabled or disabled tasks")
	return cmd
}

func (a *app) showTask(cmd *cobra.Command, raw json.RawMessage) error {
	var t taskRow
	if err := json.Unmarshal(raw, &t); err != nil {
		return err
	}
	return a.emit(raw, []string{t.ID}, func() {
		a.out.fields([][2]string{{"id", t.ID}, {"name", t.Name}, {"state", a.out.status(t.enabledWord())},
			{"schedule", dash(t.Schedule) + " (" + t.Timezone + ")"}, {"next run", when(t.NextRunAt)}, {"agent", t.AgentType},
			{"last run", strings.TrimSpace(when(t.LastRunAt) + " " + t.LastStatus)}, {"last error", dash(t.LastError)},
			{"last session", dash(deref(t.LastSessionID))}, {"limits", fmt.Sprintf("%d steps, %ds", t.MaxSteps, t.Timeout)},
			{"description", dash(t.Description)}, {"prompt", t.Prompt}})
	})
}

func (a *app) taskShowCmd() *cobra.Command {
	return &cobra.Command{Use: "show ID", Short: "Show a task", Args: exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.projectClient(cmd.Context())
			if err != nil {
				return err
			}
			var raw json.RawMessage
			if err := c.call(cmd.Context(), "GET", "/api/tasks/"+url.PathEscape(args[0]), nil, nil, nil, &raw); err != nil {
				return err
			}
			return a.showTask(cmd, raw)
		}}
}

// taskFields are the flags create and edit share; only flags given are sent.
type taskFields struct {
	name, prompt, description, schedule, timezone, agentType, template string
	maxSteps, timeout                                                  int
	disabled                                                           bool
}

func (tf *taskFields) add(cmd *cobra.Command, create bool) {
	f := cmd.Flags()
	f.StringVar(&tf.name, "name", "", "task name")
	f.StringVar(&tf.prompt, "prompt", "", "what the agent is asked to do")
	f.StringVar(&tf.description, "description", "", "what the task is for")
	f.StringVar(&tf.schedule, "schedule", "", `5-field cron expression or @hourly/@daily/"@every 15m" ("" = on demand only)`)
	f.StringVar(&tf.timezone, "timezone", "", "IANA time zone the schedule is read in (default UTC)")
	f.StringVar(&tf.agentType, "agent-type", "", "general, sre, security, cost, kubernetes or database")
	f.IntVar(&tf.maxSteps, "max-steps", 0, "agent steps per run (1-200)")
	f.IntVar(&tf.timeout, "timeout", 0, "seconds a run may take (30-86400)")
	if create {
		f.StringVar(&tf.template, "template", "", "start from this task template id")
		f.BoolVar(&tf.disabled, "disabled", false, "create it disabled")
	}
}

func (tf *taskFields) body(cmd *cobra.Command) map[string]any {
	b := map[string]any{}
	set := func(flag, key string, v any) {
		if cmd.Flags().Changed(flag) {
			b[key] = v
		}
	}
	set("name", "name", tf.name)
	set("prompt", "prompt", tf.prompt)
	set("description", "description", tf.description)
	set("schedule", "schedule", tf.schedule)
	set("timezone", "timezone", tf.timezone)
	set("agent-type", "agent_type", tf.agentType)
	set("max-steps", "max_steps", tf.maxSteps)
	set("timeout", "timeout_seconds", tf.timeout)
	set("template", "template_id", tf.template)
	if tf.disabled {
		b["enabled"] = false
	}
	return b
}

func (a *app) taskCreateCmd() *cobra.Command {
	var tf taskFields
	cmd := &cobra.Command{Use: "create --name NAME --prompt PROMPT [flags]", Short: "Create a task", Args: exactArgs(0),
		Example: `  opsagent tasks create --name "Nightly disk check" --prompt "Check disk usage on all hosts" --schedule "0 2 * * *"`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if tf.template == "" && (tf.name == "" || tf.prompt == "") {
				return usageErrorf(cmd, "--name and --prompt are required (unless --template is given)")
			}
			c, err := a.projectClient(cmd.Context())
			if err != nil {
				return err
			}
			var raw json.RawMessage
			if err := c.call(cmd.Context(), "POST", "/api/tasks", nil, tf.body(cmd), nil, &raw); err != nil {
				return err
			}
			return a.showTask(cmd, raw)
		}}
	tf.add(cmd, true)
	return cmd
}

func (a *app) taskEditCmd() *cobra.Command {
	var tf taskFields
	cmd := &cobra.Command{Use: "edit ID [flags]", Short: "Change a task (only the flags given)", Args: exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			body := tf.body(cmd)
			if len(body) == 0 {
				return usageErrorf(cmd, "nothing to change: give at least one of the flags")
			}
			return a.patchTask(cmd, args[0], body)
		}}
	tf.add(cmd, false)
	return cmd
}

func (a *app) patchTask(cmd *cobra.Command, id string, body map[string]any) error {
	c, err := a.projectClient(cmd.Context())
	if err != nil {
		return err
	}
	var raw json.RawMessage
	if err := c.call(cmd.Context(), "PATCH", "/api/tasks/"+url.PathEscape(id), nil, body, nil, &raw); err != nil {
		return err
	}
	return a.showTask(cmd, raw)
}

func (a *app) taskToggleCmd(on bool) *cobra.Command {
	use, short := "disable ID", "Stop a task's schedule (and triggers)"
	if on {
		use, short = "enable ID", "Let a task run on its schedule again"
	}
	return &cobra.Command{Use: use, Short: short, Args: exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.patchTask(cmd, args[0], map[string]any{"enabled": on})
		}}
}

func (a *app) taskTriggerCmd() *cobra.Command {
	var follow bool
	var key string
	cmd := &cobra.Command{Use: "trigger ID", Short: "Run a task now; --follow streams the run", Args: exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			c, err := a.projectClient(ctx)
			if err != nil {
				return err
			}
			if key == "" {
				key = uuid.NewString()
			}
			hdr := http.Header{}
			hdr.Set("Idempotency-Key", key)
			res, err := c.send(ctx, "POST", "/api/tasks/"+url.PathEscape(args[0])+"/trigger", nil, nil, hdr)
			if err != nil {
				return err
			}
			var raw json.RawMessage
			err = json.NewDecoder(res.Body).Decode(&raw)
			res.Body.Close()
			var out struct {
				SessionID string `json:"session_id"`
				Status    string `json:"status"`
				Replayed  bool   `json:"replayed"`
			}
			if err == nil {
				err = json.Unmarshal(raw, &out)
			}
			if err != nil {
				return fmt.Errorf("unexpected answer to trigger: %w", err)
			}
			if follow {
				return a.followRun(ctx, c, out.SessionID, 0)
			}
			return a.emit(raw, []string{out.SessionID}, func() {
				fmt.Fprintf(a.inv.Stdout, "Started run %s (%s); follow it with `opsagent sessions show %s --follow`\n", out.SessionID, out.Status, out.SessionID)
			})
		}}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "stream the run until it ends")
	cmd.Flags().StringVar(&key, "idempotency-key", "", "retry-safe key: the same key never starts a second run")
	return cmd
}

func (a *app) taskRunsCmd() *cobra.Command {
	var pf pageFlags
	cmd := &cobra.Command{Use: "runs ID", Short: "List a task's runs (its sessions), newest first", Args: exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			c, err := a.projectClient(ctx)
			if err != nil {
				return err
			}
			// The task must exist here: an unknown id is "not found", not an empty list.
			if err := c.call(ctx, "GET", "/api/tasks/"+url.PathEscape(args[0]), nil, nil, nil, nil); err != nil {
				return err
			}
			q := pf.query()
			q.Set("q", args[0])
			q.Set("source", "task")
			q.Set("sort", "created_at")
			p, _, err := getPage[json.RawMessage](ctx, a, "/api/sessions/index", q)
			if err != nil {
				return err
			}
			// q matches ids and names as substrings: keep this task's runs only.
			var runs []sessionDetail
			kept := []json.RawMessage{}
			for _, item := range p.Items {
				var s sessionDetail
				if json.Unmarshal(item, &s) == nil && s.TaskID != nil && *s.TaskID == args[0] {
					runs = append(runs, s)
					kept = append(kept, item)
				}
			}
			raw, _ := json.Marshal(map[string]any{"items": kept, "limit": p.Limit, "offset": p.Offset})
			ids := make([]string, len(runs))
			rows := make([][]string, len(runs))
			for i, s := range runs {
				ids[i] = s.ID
				rows[i] = []string{s.ID, a.out.status(s.state()), s.TriggerSource, ago(s.CreatedAt),
					(time.Duration(s.DurationMS) * time.Millisecond).Round(time.Millisecond).String(), strconv.FormatInt(s.TotalTokens, 10), money(s.Cost), clip(s.Reason, 40)}
			}
			return a.emit(raw, ids, func() {
				a.out.table([]string{"SESSION", "STATUS", "TRIGGER", "STARTED", "DURATION", "TOKENS", "COST", "REASON"}, rows)
			})
		}}
	pf.add(cmd, 25)
	return cmd
}
