package cli

import (
	"encoding/json"
	"time"

	"github.com/spf13/cobra"
)

type changeRow struct {
	ID          string            `json:"id"`
	Source      string            `json:"source"`
	Kind        string            `json:"kind"`
	Title       string            `json:"title"`
	Service     string            `json:"service"`
	Environment string            `json:"environment"`
	Author      string            `json:"author"`
	Labels      map[string]string `json:"labels"`
	OccurredAt  time.Time         `json:"occurred_at"`
	Status      string            `json:"status"`
}

func (a *app) changesCmd() *cobra.Command {
	return group("changes", "The project's change feed (deploys, releases, config changes, approved agent actions): list, create",
		a.changesListCmd(), a.changesCreateCmd())
}

func (a *app) changesListCmd() *cobra.Command {
	var pf pageFlags
	var since, until, service, source string
	var labels []string
	cmd := &cobra.Command{Use: "list", Short: "List changes, newest first", Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			q := pf.query()
			if since != "" {
				if d, err := time.ParseDuration(since); err == nil {
					since = time.Now().UTC().Add(-d).Format(time.RFC3339)
				}
				q.Set("since", since)
			}
			for k, v := range map[string]string{"until": until, "service": service, "source": source} {
				if v != "" {
					q.Set(k, v)
				}
			}
			for _, l := range labels {
				q.Add("label", l)
			}
			p, raw, err := getPage[changeRow](cmd.Context(), a, "/api/changes", q)
			if err != nil {
				return err
			}
			ids := make([]string, len(p.Items))
			rows := make([][]string, len(p.Items))
			for i, c := range p.Items {
				ids[i] = c.ID
				rows[i] = []string{c.OccurredAt.Format(time.RFC3339), c.Source, c.Kind, dash(c.Service), dash(c.Environment), clip(c.Title, 60), dash(c.Author)}
			}
			return a.emit(raw, ids, func() {
				a.out.table([]string{"AT", "SOURCE", "KIND", "SERVICE", "ENV", "TITLE", "BY"}, rows)
				a.more(p)
			})
		}}
	pf.add(cmd, 50)
	cmd.Flags().StringVar(&since, "since", "", "RFC 3339 time, or a duration back from now (2h)")
	cmd.Flags().StringVar(&until, "until", "", "RFC 3339 time")
	cmd.Flags().StringVar(&service, "service", "", "only this service")
	cmd.Flags().StringVar(&source, "source", "", "github, gitlab, generic, agent, api, kubernetes")
	cmd.Flags().StringArrayVar(&labels, "label", nil, "k=v (repeat: all must match)")
	return cmd
}

func (a *app) changesCreateCmd() *cobra.Command {
	var b struct {
		Title       string            `json:"title"`
		Kind        string            `json:"kind,omitempty"`
		Service     string            `json:"service,omitempty"`
		Environment string            `json:"environment,omitempty"`
		Description string            `json:"description,omitempty"`
		URL         string            `json:"url,omitempty"`
		Author      string            `json:"author,omitempty"`
		Labels      map[string]string `json:"labels,omitempty"`
	}
	cmd := &cobra.Command{Use: "create TITLE", Short: "Record a change (a deploy by default)", Args: exactArgs(1, "TITLE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.projectClient(cmd.Context())
			if err != nil {
				return err
			}
			b.Title = args[0]
			var out changeRow
			var raw json.RawMessage
			if err := c.call(cmd.Context(), "POST", "/api/changes", nil, b, &out, &raw); err != nil {
				return err
			}
			return a.emit(raw, []string{out.ID}, func() {
				a.out.fields([][2]string{{"id", out.ID}, {"status", out.Status}, {"kind", out.Kind}, {"title", out.Title},
					{"occurred", out.OccurredAt.Format(time.RFC3339)}})
			})
		}}
	f := cmd.Flags()
	f.StringVar(&b.Kind, "kind", "", "deploy, config, release, ... (default deploy)")
	f.StringVar(&b.Service, "service", "", "the service changed")
	f.StringVar(&b.Environment, "environment", "", "production, staging, ...")
	f.StringVar(&b.Description, "description", "", "what changed")
	f.StringVar(&b.URL, "url", "", "a link to the change")
	f.StringVar(&b.Author, "author", "", "who made it")
	f.StringToStringVar(&b.Labels, "label", nil, "k=v labels")
	return cmd
}
