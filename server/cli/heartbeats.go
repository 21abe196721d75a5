package cli

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/spf13/cobra"
)

type heartbeatRow struct {
	ID            string     `json:"id"`
	Name          string     `json:"name"`
	Schedule      string     `json:"schedule"`
	Timezone      string     `json:"timezone"`
	PeriodSeconds int64      `json:"period_seconds"`
	GraceSeconds  int64      `json:"grace_seconds"`
	TaskID        *string    `json:"task_id"`
	Enabled       bool       `json:"enabled"`
	Status        string     `json:"status"`
	LastPingAt    *time.Time `json:"last_ping_at"`
	DueAt         time.Time  `json:"due_at"`
	PingURL       string     `json:"ping_url"`
	Secret        string     `json:"secret"`
}

func (a *app) heartbeatsCmd() *cobra.Command {
	return group("heartbeats", "Heartbeat checks of the current project (cron jobs that must ping): list, create, delete",
		a.heartbeatsListCmd(), a.heartbeatsCreateCmd(), a.deleteCmd("heartbeat check", "/api/heartbeats/"))
}

// every says how a check or window recurs.
func every(schedule, tz string, seconds int64) string {
	if schedule != "" {
		if tz != "" && tz != "UTC" {
			return schedule + " (" + tz + ")"
		}
		return schedule
	}
	return "every " + short(time.Duration(seconds)*time.Second)
}

func (a *app) heartbeatsListCmd() *cobra.Command {
	return &cobra.Command{Use: "list", Short: "List the project's heartbeat checks", Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, raw, err := getPage[heartbeatRow](cmd.Context(), a, "/api/heartbeats", nil)
			if err != nil {
				return err
			}
			ids := make([]string, len(p.Items))
			rows := make([][]string, len(p.Items))
			for i, h := range p.Items {
				ids[i] = h.ID
				status := a.out.status(h.Status)
				if !h.Enabled {
					status = a.out.status("disabled")
				}
				rows[i] = []string{h.ID, clip(h.Name, 40), status, every(h.Schedule, h.Timezone, h.PeriodSeconds),
					short(time.Duration(h.GraceSeconds) * time.Second), when(h.LastPingAt), h.DueAt.Format(time.RFC3339)}
			}
			return a.emit(raw, ids, func() {
				a.out.table([]string{"ID", "NAME", "STATUS", "EXPECTED", "GRACE", "LAST PING", "DUE"}, rows)
			})
		}}
}

func (a *app) heartbeatsCreateCmd() *cobra.Command {
	var b struct {
		Name          string `json:"name"`
		Schedule      string `json:"schedule,omitempty"`
		Timezone      string `json:"timezone,omitempty"`
		PeriodSeconds int64  `json:"period_seconds,omitempty"`
		GraceSeconds  int64  `json:"grace_seconds"`
		TaskID        string `json:"task_id,omitempty"`
	}
	var period, grace time.Duration
	cmd := &cobra.Command{Use: "create", Short: "Create a heartbeat check; prints its ping URL (the secret in it is shown once)", Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if b.Name == "" {
				return usageErrorf(cmd, "--name is required")
			}
			if (b.Schedule == "") == (period == 0) {
				return usageErrorf(cmd, "give either --schedule (cron) or --period")
			}
			b.PeriodSeconds, b.GraceSeconds = int64(period/time.Second), int64(grace/time.Second)
			c, err := a.projectClient(cmd.Context())
			if err != nil {
				return err
			}
			var h heartbeatRow
			var raw json.RawMessage
			if err := c.call(cmd.Context(), "POST", "/api/heartbeats", nil, b, &h, &raw); err != nil {
				return err
			}
			return a.emit(raw, []string{h.ID}, func() {
				a.out.fields([][2]string{{"id", h.ID}, {"name", h.Name}, {"expected", every(h.Schedule, h.Timezone, h.PeriodSeconds)},
					{"grace", short(time.Duration(h.GraceSeconds) * time.Second)}, {"ping url", h.PingURL}})
				a.out.note("%s", a.out.errPaint(dim, "The ping URL holds the check's secret and is shown only now: POST or GET it when the job succeeds, append /start before it runs and /fail when it fails."))
			})
		}}
	f := cmd.Flags()
	f.StringVar(&b.Name, "name", "", "name of the check (required)")
	f.StringVar(&b.Schedule, "schedule", "", "5-field cron expression of when the job runs")
	f.StringVar(&b.Timezone, "timezone", "", "time zone of --schedule (default UTC)")
	f.DurationVar(&period, "period", 0, "instead of --schedule: the job pings every this long (e.g. 1h)")
	f.DurationVar(&grace, "grace", 5*time.Minute, "how late a ping may be before the check is down (at least 1m)")
	f.StringVar(&b.TaskID, "task", "", "id of a task to run on each miss")
	return cmd
}

// deleteCmd deletes one resource of the current project by id.
func (a *app) deleteCmd(what, prefix string) *cobra.Command {
	return &cobra.Command{Use: "delete ID", Short: "Delete a " + what, Args: exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.projectClient(cmd.Context())
			if err != nil {
				return err
			}
			if err := c.call(cmd.Context(), "DELETE", prefix+url.PathEscape(args[0]), nil, nil, nil, nil); err != nil {
				return err
			}
			switch {
			case a.out.json:
				return a.out.printJSON([]byte(`{"id":` + strconv.Quote(args[0]) + `,"deleted":true}`))
			case a.out.quiet:
				a.out.ids(args[0])
			default:
				fmt.Fprintf(a.inv.Stdout, "Deleted %s %s\n", what, args[0])
			}
			return nil
		}}
}
