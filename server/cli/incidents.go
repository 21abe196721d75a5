package cli

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/spf13/cobra"
)

type incidentRow struct {
	ID            string       `json:"id"`
	Provider      string       `json:"provider"`
	Title         string       `json:"title"`
	Severity      string       `json:"severity"`
	Status        string       `json:"status"`
	AlertCount    int          `json:"alert_count"`
	SessionID     *string      `json:"session_id"`
	OpenedAt      time.Time    `json:"opened_at"`
	LastAlertAt   time.Time    `json:"last_alert_at"`
	ResolvedAt    *time.Time   `json:"resolved_at"`
	Summary       string       `json:"summary"`
	LatestFinding *findingData `json:"latest_finding"`
	Timeline      []struct {
		At   time.Time       `json:"at"`
		Kind string          `json:"kind"`
		Text string          `json:"text"`
		Data json.RawMessage `json:"data"`
	} `json:"timeline"`
}

func (a *app) incidentsCmd() *cobra.Command {
	return group("incidents", "Incidents opened by correlated alerts: list, show, investigate", a.incidentsListCmd(), a.incidentShowCmd(), a.incidentInvestigateCmd())
}

func (a *app) incidentsListCmd() *cobra.Command {
	var pf pageFlags
	var status string
	cmd := &cobra.Command{Use: "list", Short: "List incidents, open ones first", Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			q := pf.query()
			if status != "" {
				q.Set("status", status)
			}
			p, raw, err := getPage[incidentRow](cmd.Context(), a, "/api/incidents", q)
			if err != nil {
				return err
			}
			ids := make([]string, len(p.Items))
			rows := make([][]string, len(p.Items))
			for i, in := range p.Items {
				ids[i] = in.ID
				rows[i] = []string{in.ID, a.out.status(in.Status), dash(in.Severity), clip(in.Title, 50), strconv.Itoa(in.AlertCount), in.Provider, ago(in.OpenedAt)}
			}
			return a.emit(raw, ids, func() {
				a.out.table([]string{"ID", "STATUS", "SEVERITY", "TITLE", "ALERTS", "SOURCE", "OPENED"}, rows)
				a.more(p)
			})
		}}
	pf.add(cmd, 25)
	cmd.Flags().StringVar(&status, "status", "", "triggered, acknowledged or resolved")
	return cmd
}

func (a *app) incidentShowCmd() *cobra.Command {
	return &cobra.Command{Use: "show ID", Short: "Show an incident and its timeline", Args: exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.projectClient(cmd.Context())
			if err != nil {
				return err
			}
			var in incidentRow
			var raw json.RawMessage
			if err := c.call(cmd.Context(), "GET", "/api/incidents/"+url.PathEscape(args[0]), nil, nil, &in, &raw); err != nil {
				return err
			}
			return a.emit(raw, []string{in.ID}, func() {
				a.out.fields([][2]string{{"id", in.ID}, {"title", in.Title}, {"status", a.out.status(in.Status)}, {"severity", dash(in.Severity)},
					{"source", in.Provider}, {"alerts", strconv.Itoa(in.AlertCount)}, {"opened", in.OpenedAt.Format(time.RFC3339)},
					{"last alert", ago(in.LastAlertAt)}, {"investigation", dash(deref(in.SessionID))}, {"summary", dash(clip(in.Summary, 300))}})
				if in.LatestFinding != nil {
					fmt.Fprintln(a.inv.Stdout)
					a.printFinding(in.LatestFinding)
				}
				if len(in.Timeline) > 0 {
					fmt.Fprintln(a.inv.Stdout)
					rows := make([][]string, len(in.Timeline))
					for i, e := range in.Timeline {
						text := e.Text
						if text == "" && len(e.Data) > 0 {
							text = compactJSON(e.Data)
						}
						rows[i] = []string{e.At.Format(time.RFC3339), e.Kind, clip(text, 80)}
					}
					a.out.table([]string{"AT", "KIND", "WHAT"}, rows)
				}
			})
		}}
}
