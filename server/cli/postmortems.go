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

// postmortemRow is an incident's postmortem (server/postmortems.go PostmortemOut).
type postmortemRow struct {
	IncidentID  string     `json:"incident_id"`
	Status      string     `json:"status"`
	Collection  string     `json:"collection"`
	Document    string     `json:"document"`
	Markdown    string     `json:"markdown"`
	Cited       []string   `json:"cited"`
	Invalid     []string   `json:"invalid_citations"`
	Model       string     `json:"model"`
	Error       string     `json:"error"`
	PublishedBy *string    `json:"published_by"`
	PublishedAt *time.Time `json:"published_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
}

// postmortemDraftWait is how long draft waits: the server gives a draft
// (records, model call, indexing) 3 minutes.
const postmortemDraftWait = 4 * time.Minute

func (a *app) postmortemsCmd() *cobra.Command {
	return group("postmortems", "Postmortems of resolved incidents: list, show, draft, publish, template",
		a.postmortemsListCmd(), a.postmortemShowCmd(), a.postmortemActionCmd("draft"), a.postmortemActionCmd("publish"),
		a.postmortemTemplateCmd())
}

func (a *app) postmortemsListCmd() *cobra.Command {
	var pf pageFlags
	cmd := &cobra.Command{Use: "list", Short: "List the project's postmortems (drafts and published)", Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, raw, err := getPage[postmortemRow](cmd.Context(), a, "/api/postmortems", pf.query())
			if err != nil {
				return err
			}
			ids := make([]string, len(p.Items))
			rows := make([][]string, len(p.Items))
			for i, pm := range p.Items {
				ids[i] = pm.IncidentID
				rows[i] = []string{pm.IncidentID, a.out.status(pm.Status), pm.Document, dash(pm.Model), strconv.Itoa(len(pm.Cited)), ago(pm.UpdatedAt)}
			}
			return a.emit(raw, ids, func() {
				a.out.table([]string{"INCIDENT", "STATUS", "DOCUMENT", "MODEL", "CITED", "UPDATED"}, rows)
				a.more(p)
			})
		}}
	pf.add(cmd, 25)
	return cmd
}

// showPostmortem prints a postmortem: its state, then (unless brief) the
// document as it is now.
func (a *app) showPostmortem(raw json.RawMessage, markdownOnly bool) error {
	var pm postmortemRow
	if err := json.Unmarshal(raw, &pm); err != nil {
		return err
	}
	return a.emit(raw, []string{pm.IncidentID}, func() {
		if markdownOnly {
			fmt.Fprint(a.inv.Stdout, pm.Markdown)
			if pm.Markdown != "" && !strings.HasSuffix(pm.Markdown, "\n") {
				fmt.Fprintln(a.inv.Stdout)
			}
			return
		}
		published := "-"
		if pm.PublishedAt != nil {
			published = pm.PublishedAt.Format(time.RFC3339)
		}
		model := pm.Model
		if model == "" && pm.Status != "drafting" {
			model = "none (drafted from the facts alone)"
		}
		a.out.fields([][2]string{{"incident", pm.IncidentID}, {"status", a.out.status(pm.Status)},
			{"document", pm.Collection + "/" + pm.Document}, {"model", model}, {"cited", strconv.Itoa(len(pm.Cited)) + " record(s)"},
			{"invalid", dash(strings.Join(pm.Invalid, ", "))}, {"error", dash(pm.Error)}, {"published", published}})
		if pm.Markdown != "" {
			fmt.Fprintln(a.inv.Stdout)
			fmt.Fprint(a.inv.Stdout, pm.Markdown)
			if !strings.HasSuffix(pm.Markdown, "\n") {
				fmt.Fprintln(a.inv.Stdout)
			}
		}
	})
}

func (a *app) postmortemShowCmd() *cobra.Command {
	var markdownOnly bool
	cmd := &cobra.Command{Use: "show INCIDENT_ID", Short: "Show an incident's postmortem and its document", Args: exactArgs(1, "INCIDENT_ID"),
		Example: "  opsagent postmortems show 0192f0c4-... --markdown > postmortem.md",
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.projectClient(cmd.Context())
			if err != nil {
				return err
			}
			var raw json.RawMessage
			if err := c.call(cmd.Context(), "GET", "/api/postmortems/"+url.PathEscape(args[0]), nil, nil, nil, &raw); err != nil {
				return err
			}
			return a.showPostmortem(raw, markdownOnly)
		}}
	cmd.Flags().BoolVar(&markdownOnly, "markdown", false, "print the document alone (to save or pipe it)")
	return cmd
}

// postmortemActionCmd is draft (write it again now from the recorded facts)
// or publish (the reviewed draft, as edited).
func (a *app) postmortemActionCmd(action string) *cobra.Command {
	short := "Publish an incident's reviewed postmortem draft"
	if action == "draft" {
		short = "Draft (or redraft) an incident's postmortem now from the recorded facts"
	}
	return &cobra.Command{Use: action + " INCIDENT_ID", Short: short, Args: exactArgs(1, "INCIDENT_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.projectClient(cmd.Context())
			if err != nil {
				return err
			}
			path := "/api/postmortems/" + url.PathEscape(args[0]) + "/" + action
			var raw json.RawMessage
			if action == "draft" {
				stop := a.out.spinner("drafting")
				err = c.patient(postmortemDraftWait).callWithin(cmd.Context(), postmortemDraftWait, "POST", path, nil, nil, nil, &raw)
				stop()
			} else {
				err = c.call(cmd.Context(), "POST", path, nil, nil, nil, &raw)
			}
			if err != nil {
				return err
			}
			if err := a.showPostmortem(raw, false); err != nil {
				return err
			}
			if !a.out.json && action == "draft" {
				a.out.note("%s", a.out.errPaint(dim, "Review and edit the document in the knowledge store, then: opsagent postmortems publish "+args[0]))
			}
			return nil
		}}
}

func (a *app) postmortemTemplateCmd() *cobra.Command {
	show := &cobra.Command{Use: "template", Short: "Show the org's postmortem template (its section headings); set changes it", Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.postmortemTemplate(cmd, "GET", nil)
		}}
	set := &cobra.Command{Use: "set HEADING...", Short: "Set the org's postmortem template: its section headings, in order", Args: rangeArgs(1, 20),
		Example: `  opsagent postmortems template set Summary Impact Timeline "Root cause" "Action items"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, h := range args {
				if h = strings.TrimSpace(h); h == "" || strings.ContainsAny(h, "\n#") {
					return usageErrorf(cmd, "a section heading is text on one line, without # (got %q)", h)
				}
			}
			return a.postmortemTemplate(cmd, "PUT", map[string]any{"sections": args})
		}}
	show.AddCommand(set)
	return show
}

func (a *app) postmortemTemplate(cmd *cobra.Command, method string, body any) error {
	c, err := a.client()
	if err != nil {
		return err
	}
	var t struct {
		Sections []string `json:"sections"`
	}
	var raw json.RawMessage
	if err := c.call(cmd.Context(), method, "/api/postmortem-template", nil, body, &t, &raw); err != nil {
		return err
	}
	return a.emit(raw, t.Sections, func() {
		for i, s := range t.Sections {
			fmt.Fprintf(a.inv.Stdout, "%2d. %s\n", i+1, s)
		}
	})
}
