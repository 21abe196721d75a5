package cli

import (
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/spf13/cobra"
)

// webhookMatchCmd tries a routing condition on a stored event: the routing
// rule editor's "test against this event" (server/webhooks_match.go).
// Nothing is dispatched.
func (a *app) webhookMatchCmd() *cobra.Command {
	var task, condition string
	cmd := &cobra.Command{Use: "match EVENT_ID --task TASK --condition EXPR",
		Short:   "Try a routing condition on a received event, without dispatching anything",
		Args:    exactArgs(1, "EVENT_ID"),
		Example: `  opsagent webhooks match 0192f0c4-... --task "CPU alerts" --condition 'alert.severity == "critical"'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if task == "" {
				return usageErrorf(cmd, "--task is required (the task whose webhook received the event)")
			}
			if condition == "" {
				return usageErrorf(cmd, "--condition is required (an expression over alert, alerts, event, provider, payload and headers)")
			}
			id, err := a.resolveTask(cmd.Context(), task)
			if err != nil {
				return err
			}
			c, err := a.projectClient(cmd.Context())
			if err != nil {
				return err
			}
			var out struct {
				Matched   bool   `json:"matched"`
				Error     string `json:"error"`
				EventType string `json:"event_type"`
				Provider  string `json:"provider"`
			}
			var raw json.RawMessage
			path := "/api/tasks/" + url.PathEscape(id) + "/webhook/events/" + url.PathEscape(args[0]) + "/match"
			if err := c.call(cmd.Context(), "POST", path, nil, map[string]string{"condition": condition}, &out, &raw); err != nil {
				return err
			}
			var ids []string
			if out.Matched {
				ids = []string{args[0]}
			}
			return a.emit(raw, ids, func() {
				verdict := a.out.paint(green, "matched")
				if !out.Matched {
					verdict = a.out.paint(red, "no match")
				}
				fmt.Fprintf(a.inv.Stdout, "%s: %s event %s (%s)\n", verdict, out.Provider, args[0], dash(out.EventType))
				if out.Error != "" {
					fmt.Fprintf(a.inv.Stdout, "%s %s\n", a.out.paint(yellow, "evaluating it failed on this event:"), out.Error)
				}
			})
		}}
	f := cmd.Flags()
	f.StringVarP(&task, "task", "t", "", "the task (id or exact name) whose webhook received the event")
	f.StringVar(&condition, "condition", "", `the condition, e.g. alert.severity == "critical"`)
	return cmd
}
