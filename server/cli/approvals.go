package cli

import (
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/spf13/cobra"
)

type approvalRow struct {
	ID        string          `json:"id"`
	Kind      string          `json:"kind"`
	SessionID *string         `json:"session_id"`
	Title     string          `json:"title"`
	Reason    string          `json:"reason"`
	Subject   json.RawMessage `json:"subject"`
	Status    string          `json:"status"`
	ExpiresAt time.Time       `json:"expires_at"`
	Comment   string          `json:"comment"`
	CreatedAt time.Time       `json:"created_at"`
}

func (a *app) approvalsCmd() *cobra.Command {
	return group("approvals", "Risky actions waiting for a person: list, approve, deny",
		a.approvalsListCmd(), a.decideCmd("approve"), a.decideCmd("deny"))
}

func (a *app) approvalsListCmd() *cobra.Command {
	var pf pageFlags
	var status, kind, session string
	cmd := &cobra.Command{Use: "list", Short: "List approvals (pending ones unless --status says otherwise)", Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			q := pf.query()
			if status != "all" {
				q.Set("status", status)
			}
			if kind != "" {
				q.Set("kind", kind)
			}
			if session != "" {
				q.Set("session_id", session)
			}
			p, raw, err := getPage[approvalRow](cmd.Context(), a, "/api/approvals", q)
			if err != nil {
				return err
			}
			ids := make([]string, len(p.Items))
			rows := make([][]string, len(p.Items))
			for i, ap := range p.Items {
				ids[i] = ap.ID
				expires := ago(ap.ExpiresAt)
				if ap.Status != "pending" {
					expires = "-"
				}
				rows[i] = []string{ap.ID, a.out.status(ap.Status), ap.Kind, clip(ap.Title, 60), dash(deref(ap.SessionID)), expires}
			}
			return a.emit(raw, ids, func() {
				a.out.table([]string{"ID", "STATUS", "KIND", "WHAT", "SESSION", "EXPIRES"}, rows)
				a.more(p)
			})
		}}
	pf.add(cmd, 25)
	cmd.Flags().StringVar(&status, "status", "pending", "pending, approved, denied, expired or all")
	cmd.Flags().StringVar(&kind, "kind", "", "tool_call or webhook_event")
	cmd.Flags().StringVar(&session, "session", "", "only this session's approvals")
	return cmd
}

func (a *app) decideCmd(action string) *cobra.Command {
	var comment string
	short := "Approve: the call runs (or the webhook event is dispatched) and the session goes on"
	if action == "deny" {
		short = "Deny: the call does not run; the agent is told why (--comment)"
	}
	cmd := &cobra.Command{Use: action + " ID", Short: short, Args: exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.projectClient(cmd.Context())
			if err != nil {
				return err
			}
			var ap approvalRow
			var raw json.RawMessage
			err = c.call(cmd.Context(), "POST", "/api/approvals/"+url.PathEscape(args[0])+"/"+action, nil,
				map[string]string{"comment": comment}, &ap, &raw)
			if err != nil {
				return err
			}
			return a.emit(raw, []string{ap.ID}, func() {
				fmt.Fprintf(a.inv.Stdout, "Approval %s: %s\n", ap.ID, a.out.status(ap.Status))
			})
		}}
	cmd.Flags().StringVarP(&comment, "comment", "m", "", "why (the agent reads it when a call is denied)")
	return cmd
}
