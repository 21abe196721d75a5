package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

type project struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Slug        string    `json:"slug"`
	Description string    `json:"description"`
	Archived    bool      `json:"archived"`
	CreatedAt   time.Time `json:"created_at"`
}

func (a *app) listProjects(ctx context.Context) ([]project, error) {
	c, err := a.client()
	if err != nil {
		return nil, err
	}
	var ps []project
	err = c.call(ctx, "GET", "/api/projects", nil, nil, &ps, nil)
	return ps, err
}

// findProject matches an id, then a slug, then a name (case-insensitive).
func findProject(ps []project, want string) (*project, error) {
	for _, match := range []func(p project) bool{
		func(p project) bool { return p.ID == want },
		func(p project) bool { return p.Slug == want },
		func(p project) bool { return strings.EqualFold(p.Name, want) },
	} {
		var found []project
		for _, p := range ps {
			if match(p) {
				found = append(found, p)
			}
		}
		if len(found) == 1 {
			return &found[0], nil
		}
		if len(found) > 1 {
			return nil, &Error{Code: ExitUsage, Err: fmt.Errorf("%q names %d projects; use its id", want, len(found))}
		}
	}
	return nil, &APIError{Status: 404, Detail: fmt.Sprintf("no project %q among the %d you can see", want, len(ps))}
}

func (a *app) projectsCmd() *cobra.Command {
	var archived bool
	list := &cobra.Command{Use: "list", Short: "List the projects you can see (* marks the current one)", Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			q := url.Values{}
			if archived {
				q.Set("include_archived", "true")
			}
			var ps []project
			var raw json.RawMessage
			if err := c.call(cmd.Context(), "GET", "/api/projects", q, nil, &ps, &raw); err != nil {
				return err
			}
			if a.out.json {
				return a.out.printJSON(raw)
			}
			current := a.cfg.Profiles[a.profile].Project
			rows := make([][]string, 0, len(ps))
			for _, p := range ps {
				if a.out.quiet {
					a.out.ids(p.ID)
					continue
				}
				mark := " "
				if p.ID == current {
					mark = "*"
				}
				rows = append(rows, []string{mark, p.ID, p.Name, p.Slug, clip(p.Description, 50)})
			}
			if !a.out.quiet {
				a.out.table([]string{" ", "ID", "NAME", "SLUG", "DESCRIPTION"}, rows)
			}
			return nil
		}}
	list.Flags().BoolVar(&archived, "archived", false, "include archived projects")
	use := &cobra.Command{Use: "use NAME|ID", Short: "Make a project the current one for this profile", Args: exactArgs(1, "NAME|ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ps, err := a.listProjects(cmd.Context())
			if err != nil {
				return err
			}
			p, err := findProject(ps, args[0])
			if err != nil {
				return err
			}
			prof := a.cfg.Profiles[a.profile]
			prof.Project, prof.ProjectName = p.ID, p.Name
			a.cfg.Profiles[a.profile] = prof
			if err := a.cfg.save(a.cfgPath); err != nil {
				return err
			}
			switch {
			case a.out.json:
				b, _ := json.Marshal(p)
				return a.out.printJSON(b)
			case a.out.quiet:
				a.out.ids(p.ID)
			default:
				fmt.Fprintf(a.inv.Stdout, "Now using project %s (%s)\n", a.out.paint(bold, p.Name), p.ID)
			}
			return nil
		}}
	return group("projects", "List projects and choose the current one", list, use)
}

func (a *app) whoamiCmd() *cobra.Command {
	return &cobra.Command{Use: "whoami", Short: "Show who you are signed in as, where, and the current project", Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			var me struct {
				ID           string `json:"id"`
				Email        string `json:"email"`
				Name         string `json:"name"`
				Role         string `json:"role"`
				CurrentOrgID string `json:"current_org_id"`
			}
			var raw json.RawMessage
			if err := c.call(cmd.Context(), "GET", "/api/auth/me", nil, nil, &me, &raw); err != nil {
				return err
			}
			if a.out.json {
				return a.out.printJSON(raw)
			}
			if a.out.quiet {
				a.out.ids(me.ID)
				return nil
			}
			how := "signed in with `opsagent login` (" + c.auth.path + ")"
			if c.auth.static != "" {
				how = "OPSAGENT_TOKEN (access token)"
				if strings.HasPrefix(c.auth.static, "opsk_") {
					how = "OPSAGENT_TOKEN (API key)"
				}
			}
			prof := a.cfg.Profiles[a.profile]
			proj := "-"
			if a.project != "" {
				proj = a.project + " (--project)"
			} else if prof.Project != "" {
				proj = prof.ProjectName + " (" + prof.Project + ")"
			}
			// The org by name as well as id: an id alone says little to a
			// person with several. A failed look-up still shows the id.
			org := me.CurrentOrgID
			var o struct {
				Name string `json:"name"`
			}
			if me.CurrentOrgID != "" && c.call(cmd.Context(), "GET", "/api/organizations/"+url.PathEscape(me.CurrentOrgID), nil, nil, &o, nil) == nil && o.Name != "" {
				org = o.Name + " (" + me.CurrentOrgID + ")"
			}
			a.out.fields([][2]string{{"user", me.Email + nameSuffix(me.Name)}, {"user id", me.ID}, {"role", me.Role},
				{"organization", org}, {"server", c.base}, {"profile", a.profile}, {"project", proj}, {"credential", how}})
			return nil
		}}
}

func nameSuffix(n string) string {
	if n == "" {
		return ""
	}
	return " (" + n + ")"
}
