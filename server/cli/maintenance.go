package cli

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

type windowRow struct {
	ID              string            `json:"id"`
	Name            string            `json:"name"`
	StartsAt        *time.Time        `json:"starts_at"`
	EndsAt          *time.Time        `json:"ends_at"`
	Schedule        string            `json:"schedule"`
	Timezone        string            `json:"timezone"`
	DurationSeconds int64             `json:"duration_seconds"`
	MatchSources    []string          `json:"match_sources"`
	MatchLabels     map[string]string `json:"match_labels"`
	Mode            string            `json:"mode"`
	Enabled         bool              `json:"enabled"`
	Active          bool              `json:"active"`
	NextStart       *time.Time        `json:"next_start"`
}

func (a *app) maintenanceCmd() *cobra.Command {
	return group("maintenance", "Maintenance windows of the current project (alerts then are stored, not acted on): list, create, delete",
		a.maintenanceListCmd(), a.maintenanceCreateCmd(), a.deleteCmd("maintenance window", "/api/maintenance-windows/"))
}

// span says when a window is: its one-off bounds or its recurrence.
func (w *windowRow) span() string {
	if w.Schedule != "" {
		return every(w.Schedule, w.Timezone, 0) + " for " + short(time.Duration(w.DurationSeconds)*time.Second)
	}
	if w.StartsAt != nil && w.EndsAt != nil {
		return w.StartsAt.Format(time.RFC3339) + " - " + w.EndsAt.Format(time.RFC3339)
	}
	return "-"
}

func (w *windowRow) covers() string {
	var parts []string
	if len(w.MatchSources) > 0 {
		parts = append(parts, strings.Join(w.MatchSources, ","))
	}
	for k, v := range w.MatchLabels {
		parts = append(parts, k+"="+v)
	}
	if len(parts) == 0 {
		return "all alerts"
	}
	return strings.Join(parts, " ")
}

func (a *app) maintenanceListCmd() *cobra.Command {
	return &cobra.Command{Use: "list", Short: "List the project's maintenance windows", Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, raw, err := getPage[windowRow](cmd.Context(), a, "/api/maintenance-windows", nil)
			if err != nil {
				return err
			}
			ids := make([]string, len(p.Items))
			rows := make([][]string, len(p.Items))
			for i := range p.Items {
				w := &p.Items[i]
				ids[i] = w.ID
				state := "inactive"
				switch {
				case !w.Enabled:
					state = a.out.status("disabled")
				case w.Active:
					state = a.out.status("active")
				}
				rows[i] = []string{w.ID, clip(w.Name, 40), state, w.Mode, w.span(), when(w.NextStart), clip(w.covers(), 40)}
			}
			return a.emit(raw, ids, func() {
				a.out.table([]string{"ID", "NAME", "STATE", "MODE", "WHEN", "NEXT START", "COVERS"}, rows)
			})
		}}
}

func (a *app) maintenanceCreateCmd() *cobra.Command {
	var b struct {
		Name            string            `json:"name"`
		StartsAt        *time.Time        `json:"starts_at,omitempty"`
		EndsAt          *time.Time        `json:"ends_at,omitempty"`
		Schedule        string            `json:"schedule,omitempty"`
		Timezone        string            `json:"timezone,omitempty"`
		DurationSeconds int64             `json:"duration_seconds,omitempty"`
		MatchSources    []string          `json:"match_sources,omitempty"`
		MatchLabels     map[string]string `json:"match_labels,omitempty"`
		Mode            string            `json:"mode"`
	}
	var starts, ends string
	var duration time.Duration
	var labels []string
	cmd := &cobra.Command{Use: "create", Short: "Create a one-off (--starts, --ends) or recurring (--schedule, --duration) window", Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if b.Name == "" {
				return usageErrorf(cmd, "--name is required")
			}
			for flag, v := range map[string]string{"--starts": starts, "--ends": ends} {
				if v == "" {
					continue
				}
				t, err := time.Parse(time.RFC3339, v)
				if err != nil {
					return usageErrorf(cmd, "%s must be an RFC 3339 time such as 2026-11-25T22:00:00Z, not %q", flag, v)
				}
				if flag == "--starts" {
					b.StartsAt = &t
				} else {
					b.EndsAt = &t
				}
			}
			b.DurationSeconds = int64(duration / time.Second)
			for _, l := range labels {
				k, v, ok := strings.Cut(l, "=")
				if !ok || k == "" {
					return usageErrorf(cmd, "--label must look like name=glob, not %q", l)
				}
				if b.MatchLabels == nil {
					b.MatchLabels = map[string]string{}
				}
				b.MatchLabels[k] = v
			}
			c, err := a.projectClient(cmd.Context())
			if err != nil {
				return err
			}
			var w windowRow
			var raw json.RawMessage
			if err := c.call(cmd.Context(), "POST", "/api/maintenance-windows", nil, b, &w, &raw); err != nil {
				return err
			}
			return a.emit(raw, []string{w.ID}, func() {
				a.out.fields([][2]string{{"id", w.ID}, {"name", w.Name}, {"mode", w.Mode}, {"when", w.span()},
					{"active now", yesno(w.Active)}, {"covers", w.covers()}})
			})
		}}
	f := cmd.Flags()
	f.StringVar(&b.Name, "name", "", "name of the window (required)")
	f.StringVar(&starts, "starts", "", "one-off window: start, RFC 3339")
	f.StringVar(&ends, "ends", "", "one-off window: end (exclusive), RFC 3339")
	f.StringVar(&b.Schedule, "schedule", "", "recurring window: 5-field cron of each start")
	f.StringVar(&b.Timezone, "timezone", "", "time zone of --schedule (default UTC)")
	f.DurationVar(&duration, "duration", 0, "recurring window: how long each occurrence lasts (e.g. 2h)")
	f.StringSliceVar(&b.MatchSources, "source", nil, "webhook providers it covers (repeat or comma-separate; default all)")
	f.StringArrayVar(&labels, "label", nil, "name=glob every alert must match (repeatable; default all)")
	f.StringVar(&b.Mode, "mode", "suppress", "suppress (store alerts, run nothing) or observe (run read-only)")
	return cmd
}
