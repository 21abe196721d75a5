package server

import (
	"strings"
	"time"

	"github.com/opsagent/opsagent/server/tools/shellscan"
	"github.com/opsagent/opsagent/store"
)

// A project's command policy: whether run_command lines the analysis
// proves read-only run without a person, its additions to the built-in
// read-only list, and its additions to the effect categories that rules
// (match_type effect) name.

// CommandPolicyIn replaces a project's command policy.
type CommandPolicyIn struct {
	AutoAllowReadOnly bool                `json:"auto_allow_read_only" doc:"let run_command lines the analysis proves read-only run without a person"`
	ReadOnlyCommands  []string            `json:"read_only_commands" doc:"command patterns added to the built-in read-only list, e.g. 'kubectl get *'"`
	Effects           map[string][]string `json:"effects" doc:"command patterns added to effect categories (a new name makes a new category)"`
}

// CommandCategoryOut is one effect category as it applies to the project.
type CommandCategoryOut struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Builtin     []string `json:"builtin" doc:"the built-in command patterns"`
	Added       []string `json:"added" doc:"the project's additions"`
	Writes      []string `json:"writes" doc:"files whose writing has the effect"`
}

// CommandPolicyOut is a project's command policy with the built-ins beside it.
type CommandPolicyOut struct {
	AutoAllowReadOnly bool                 `json:"auto_allow_read_only"`
	ReadOnlyCommands  []string             `json:"read_only_commands"`
	BuiltinReadOnly   []string             `json:"builtin_read_only"`
	Categories        []CommandCategoryOut `json:"categories"`
	UpdatedAt         *time.Time           `json:"updated_at"`
}

func (s *Server) commandPolicyRoutes() []*Route {
	tags := []string{"rules"}
	return []*Route{
		{Method: "GET", Path: "/api/command-policy", Summary: "The project's run_command policy: read-only auto-allow and effect categories", Tags: tags, Auth: AuthAny, Perm: PermProjectRead, Project: true, Resp: CommandPolicyOut{}, Status: 200, MCP: true, Handle: s.handleGetCommandPolicy},
		{Method: "PUT", Path: "/api/command-policy", Summary: "Replace the project's run_command policy", Tags: tags, Auth: AuthAny, Perm: PermRulesWrite, Project: true, Body: CommandPolicyIn{}, Resp: CommandPolicyOut{}, Status: 200, MaxBody: 64 << 10, Handle: s.handlePutCommandPolicy},
	}
}

func commandPolicyOut(p *store.CommandPolicy) CommandPolicyOut {
	out := CommandPolicyOut{AutoAllowReadOnly: p.AutoAllowReadOnly, ReadOnlyCommands: p.ReadOnlyCommands,
		BuiltinReadOnly: shellscan.BuiltinReadOnly}
	if out.ReadOnlyCommands == nil {
		out.ReadOnlyCommands = []string{}
	}
	if !p.UpdatedAt.IsZero() {
		t := p.UpdatedAt
		out.UpdatedAt = &t
	}
	seen := map[string]bool{}
	for _, c := range shellscan.Builtin {
		seen[c.Name] = true
		out.Categories = append(out.Categories, CommandCategoryOut{Name: c.Name, Description: c.Description, Builtin: c.Commands,
			Added: orNoStrings(p.Effects[c.Name]), Writes: orNoStrings(c.Writes)})
	}
	for _, name := range sortedKeys(p.Effects) {
		if !seen[name] {
			out.Categories = append(out.Categories, CommandCategoryOut{Name: name, Description: "added by the project",
				Builtin: []string{}, Added: p.Effects[name], Writes: []string{}})
		}
	}
	return out
}

func orNoStrings(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

func sortedKeys(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// handleGetCommandPolicy is GET /api/command-policy.
func (s *Server) handleGetCommandPolicy(c *Ctx) error {
	p, err := s.db.FindCommandPolicy(c.Context(), c.OrgID(), c.ProjectID())
	if err != nil {
		return err
	}
	return c.JSON(200, commandPolicyOut(p))
}

// handlePutCommandPolicy is PUT /api/command-policy.
func (s *Server) handlePutCommandPolicy(c *Ctx) error {
	var req CommandPolicyIn
	if err := c.Bind(&req); err != nil {
		return err
	}
	if len(req.ReadOnlyCommands) > 200 {
		return invalid("at most 200 read-only patterns", "value_error", "body", "read_only_commands")
	}
	for i, t := range req.ReadOnlyCommands {
		if strings.TrimSpace(t) == "" || len(t) > 500 {
			return invalid("a read-only pattern is a command name and argument globs, at most 500 characters", "value_error", "body", "read_only_commands", i)
		}
	}
	n := 0
	for name, pats := range req.Effects {
		n += len(pats)
		for _, t := range pats {
			if len(t) > 500 {
				return invalid("a command pattern is at most 500 characters", "value_error", "body", "effects", name)
			}
		}
	}
	if len(req.Effects) > 50 || n > 500 {
		return invalid("at most 50 categories and 500 patterns", "value_error", "body", "effects")
	}
	p := &store.CommandPolicy{OrgID: c.OrgID(), ProjectID: c.ProjectID(), AutoAllowReadOnly: req.AutoAllowReadOnly,
		ReadOnlyCommands: orNoStrings(req.ReadOnlyCommands), Effects: req.Effects, UpdatedBy: c.ID.UserID}
	if p.Effects == nil {
		p.Effects = map[string][]string{}
	}
	if _, err := shellscan.NewReadOnly(p.ReadOnlyCommands); err != nil {
		return invalid(err.Error(), "value_error", "body", "read_only_commands")
	}
	if _, err := shellscan.NewCatalog(p.Effects); err != nil {
		return invalid(err.Error(), "value_error", "body", "effects")
	}
	if err := s.db.PutCommandPolicy(c.Context(), p); err != nil {
		return err
	}
	c.Audit("command_policy.updated", "success", "project", p.ProjectID, map[string]any{
		"auto_allow_read_only": p.AutoAllowReadOnly, "read_only_commands": len(p.ReadOnlyCommands), "effect_categories": len(p.Effects)})
	return c.JSON(200, commandPolicyOut(p))
}
