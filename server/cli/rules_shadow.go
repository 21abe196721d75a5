package cli

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/spf13/cobra"
)

// shadowRow is a shadow rule (server/rules_shadow.go ShadowRuleDetailOut).
type shadowRow struct {
	ID          string    `json:"id"`
	Kind        string    `json:"kind"`
	Effect      string    `json:"effect"`
	Description string    `json:"description"`
	Tool        string    `json:"tool"`
	MatchType   string    `json:"match_type"`
	Pattern     string    `json:"pattern"`
	TrialUntil  time.Time `json:"trial_until"`
	OnTrial     bool      `json:"on_trial"`
	Hits        int       `json:"hits"`
	Recorded    []struct {
		SessionID *string   `json:"session_id"`
		At        time.Time `json:"at"`
		Tool      string    `json:"tool"`
		Command   string    `json:"command"`
		Actual    string    `json:"actual"`
		Would     string    `json:"would"`
	} `json:"recorded"`
}

// matches says what calls a rule applies to.
func matches(tool, matchType, pattern string) string {
	if tool == "" {
		tool = "*"
	}
	if matchType == "" {
		return tool
	}
	return tool + " " + matchType + " " + strconv.Quote(pattern)
}

func (r *shadowRow) trial() string {
	if r.OnTrial {
		return "until " + r.TrialUntil.Local().Format("2006-01-02 15:04")
	}
	return "ended " + ago(r.TrialUntil)
}

func (a *app) shadowCmd() *cobra.Command {
	return group("shadow", "Shadow rules: on trial they record the calls they would have decided differently, and decide nothing",
		a.shadowListCmd(), a.shadowCreateCmd(), a.shadowShowCmd(), a.shadowPromoteCmd(), a.deleteCmd("shadow rule", "/api/rules/shadow/"))
}

func (a *app) shadowListCmd() *cobra.Command {
	return &cobra.Command{Use: "list", Short: "List the project's shadow rules", Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, raw, err := getPage[shadowRow](cmd.Context(), a, "/api/rules/shadow", nil)
			if err != nil {
				return err
			}
			ids := make([]string, len(p.Items))
			rows := make([][]string, len(p.Items))
			for i, r := range p.Items {
				ids[i] = r.ID
				rows[i] = []string{r.ID, r.Kind, r.Effect, clip(matches(r.Tool, r.MatchType, r.Pattern), 40), strconv.Itoa(r.Hits), r.trial(), clip(r.Description, 40)}
			}
			return a.emit(raw, ids, func() {
				a.out.table([]string{"ID", "KIND", "EFFECT", "MATCHES", "HITS", "TRIAL", "DESCRIPTION"}, rows)
			})
		}}
}

func (a *app) showShadow(raw json.RawMessage) error {
	var r shadowRow
	if err := json.Unmarshal(raw, &r); err != nil {
		return err
	}
	return a.emit(raw, []string{r.ID}, func() {
		a.out.fields([][2]string{{"id", r.ID}, {"kind", r.Kind}, {"effect", r.Effect}, {"matches", matches(r.Tool, r.MatchType, r.Pattern)},
			{"description", r.Description}, {"trial", r.trial()}, {"hits", strconv.Itoa(r.Hits)}})
		if len(r.Recorded) > 0 {
			fmt.Fprintln(a.inv.Stdout)
			rows := make([][]string, len(r.Recorded))
			for i, h := range r.Recorded {
				rows[i] = []string{h.At.Local().Format("2006-01-02 15:04:05"), dash(deref(h.SessionID)), h.Tool, h.Actual, h.Would, clip(dash(h.Command), 60)}
			}
			a.out.table([]string{"AT", "SESSION", "TOOL", "DECIDED", "WOULD", "CALL"}, rows)
		}
	})
}

func (a *app) shadowCreateCmd() *cobra.Command {
	var r ruleDraft
	var trial int
	cmd := &cobra.Command{Use: "create --kind KIND --description TEXT [flags]", Short: "Put a rule on trial: it records what it would have done, for --trial days",
		Args:    exactArgs(0),
		Example: `  opsagent rules shadow create --kind must_never --description "no restarts" --tool run_command --match command --pattern "systemctl restart *" --trial 14`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := r.check(cmd); err != nil {
				return err
			}
			if r.Tool == "" && r.MatchType == "" {
				return usageErrorf(cmd, "a shadow rule must match calls: give --tool and/or --match with --pattern")
			}
			c, err := a.projectClient(cmd.Context())
			if err != nil {
				return err
			}
			body := struct {
				ruleDraft
				TrialDays int `json:"trial_days"`
			}{r, trial}
			var raw json.RawMessage
			if err := c.call(cmd.Context(), "POST", "/api/rules/shadow", nil, body, nil, &raw); err != nil {
				return err
			}
			return a.showShadow(raw)
		}}
	r.add(cmd)
	cmd.Flags().IntVar(&trial, "trial", 7, "days it records (1-90)")
	return cmd
}

func (a *app) shadowShowCmd() *cobra.Command {
	return &cobra.Command{Use: "show ID", Short: "Show a shadow rule and the calls it would have decided differently", Args: exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.projectClient(cmd.Context())
			if err != nil {
				return err
			}
			var raw json.RawMessage
			if err := c.call(cmd.Context(), "GET", "/api/rules/shadow/"+url.PathEscape(args[0]), nil, nil, nil, &raw); err != nil {
				return err
			}
			return a.showShadow(raw)
		}}
}

func (a *app) shadowPromoteCmd() *cobra.Command {
	return &cobra.Command{Use: "promote ID", Short: "Make a shadow rule a live project rule (it decides from now on)", Args: exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.projectClient(cmd.Context())
			if err != nil {
				return err
			}
			var r shadowRow
			var raw json.RawMessage
			if err := c.call(cmd.Context(), "POST", "/api/rules/shadow/"+url.PathEscape(args[0])+"/promote", nil, nil, &r, &raw); err != nil {
				return err
			}
			return a.emit(raw, []string{r.ID}, func() {
				fmt.Fprintf(a.inv.Stdout, "Promoted: rule %s (%s, %s %s) is live\n", r.ID, r.Kind, r.Effect, matches(r.Tool, r.MatchType, r.Pattern))
			})
		}}
}
