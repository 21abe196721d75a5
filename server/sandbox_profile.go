package server

import (
	"path/filepath"
	"strings"
	"time"

	"github.com/opsagent/opsagent/store"
)

// A project's sandbox profile: where approved run_command lines may write.
// Without an allow-paths list they may write wherever the host's user may;
// with one, Landlock lets them write only beneath those paths (and to
// /dev/null and their private temp dir). The profile goes with every
// command, to the server's own run_command and to each connector host,
// where the host's --sandbox-profile narrows it further: the intersection
// runs, and the host has the last word. Read-only auto-allowed lines stay
// read-only whatever the list says.

// Limits of an allow-paths list: enough for real layouts, small enough that
// every command's Landlock rules stay cheap to build.
const (
	maxAllowPaths   = 32
	maxAllowPathLen = 512
)

// SandboxProfileIn replaces a project's sandbox profile.
type SandboxProfileIn struct {
	AllowPaths []string `json:"allow_paths" validate:"max=32" doc:"absolute paths approved commands may write beneath (besides /dev/null and a private temp dir); empty: wherever the host's user may write. At most 32, each at most 512 characters, no '..'"`
}

// SandboxProfileOut is a project's sandbox profile and what it means.
type SandboxProfileOut struct {
	AllowPaths []string   `json:"allow_paths"`
	Summary    string     `json:"summary" doc:"what approved commands may write, in a sentence"`
	UpdatedAt  *time.Time `json:"updated_at"`
}

func (s *Server) sandboxProfileRoutes() []*Route {
	tags := []string{"rules"}
	return []*Route{
		{Method: "GET", Path: "/api/sandbox-profile", Summary: "The project's sandbox profile: the paths approved commands may write", Tags: tags, Auth: AuthAny, Perm: PermProjectRead, Project: true, Resp: SandboxProfileOut{}, Status: 200, MCP: true, Handle: s.handleGetSandboxProfile},
		{Method: "PUT", Path: "/api/sandbox-profile", Summary: "Replace the project's sandbox profile (a connector host's --sandbox-profile still narrows it)", Tags: tags, Auth: AuthAny, Perm: PermRulesWrite, Project: true, Body: SandboxProfileIn{}, Resp: SandboxProfileOut{}, Status: 200, MaxBody: 32 << 10, Handle: s.handlePutSandboxProfile},
	}
}

func sandboxProfileOut(p *store.SandboxProfile) SandboxProfileOut {
	out := SandboxProfileOut{AllowPaths: orNoStrings(p.AllowPaths), Summary: "approved commands may write wherever the host's user may"}
	if len(p.AllowPaths) > 0 {
		out.Summary = "approved commands may write only beneath " + strings.Join(p.AllowPaths, ", ") +
			" (and /dev/null and their private temp dir); a connector host's own profile may narrow this further"
	}
	if !p.UpdatedAt.IsZero() {
		t := p.UpdatedAt
		out.UpdatedAt = &t
	}
	return out
}

// cleanAllowPaths checks an allow-paths list and returns it cleaned
// (trailing slashes dropped, duplicates removed, order kept).
func cleanAllowPaths(paths []string) ([]string, error) {
	if len(paths) > maxAllowPaths {
		return nil, invalid("at most 32 allow-paths", "value_error", "body", "allow_paths")
	}
	out := []string{}
	seen := map[string]bool{}
	for i, p := range paths {
		bad := func(msg string) error { return invalid(msg, "value_error", "body", "allow_paths", i) }
		switch {
		case strings.TrimSpace(p) == "":
			return nil, bad("an allow-path is not empty")
		case len(p) > maxAllowPathLen:
			return nil, bad("an allow-path is at most 512 characters")
		case !strings.HasPrefix(p, "/"):
			return nil, bad("an allow-path is absolute (it starts with /): a relative one would depend on each host's working directory")
		case strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }):
			return nil, bad("an allow-path has no control characters")
		}
		for _, part := range strings.Split(p, "/") {
			if part == ".." {
				return nil, bad("an allow-path has no '..': name the directory itself")
			}
		}
		c := filepath.Clean(p)
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out, nil
}

// handleGetSandboxProfile is GET /api/sandbox-profile.
func (s *Server) handleGetSandboxProfile(c *Ctx) error {
	p, err := s.db.FindSandboxProfile(c.Context(), c.OrgID(), c.ProjectID())
	if err != nil {
		return err
	}
	return c.JSON(200, sandboxProfileOut(p))
}

// handlePutSandboxProfile is PUT /api/sandbox-profile.
func (s *Server) handlePutSandboxProfile(c *Ctx) error {
	var req SandboxProfileIn
	if err := c.Bind(&req); err != nil {
		return err
	}
	paths, err := cleanAllowPaths(req.AllowPaths)
	if err != nil {
		return err
	}
	p := &store.SandboxProfile{OrgID: c.OrgID(), ProjectID: c.ProjectID(), AllowPaths: paths, UpdatedBy: c.ID.UserID}
	if err := s.db.PutSandboxProfile(c.Context(), p); err != nil {
		return err
	}
	c.Audit("sandbox_profile.updated", "success", "project", p.ProjectID, map[string]any{"allow_paths": p.AllowPaths})
	return c.JSON(200, sandboxProfileOut(p))
}
