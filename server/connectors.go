package server

import (
	"encoding/hex"
	"github.com/opsagent/opsagent/server/sandbox"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/opsagent/opsagent/server/auth"
	"github.com/opsagent/opsagent/server/connector"
	"github.com/opsagent/opsagent/store"
)

// Connectors are a project's outbound-only agents, one per host
// (`opsagent connector`). The enrollment token is shown once at creation
// and on rotation; only its hash is kept. Revoking, rotating or deleting
// drops a live connection at once. The channel itself is connectors_ws.go.

// ConnectorOut is one connector and its live state.
type ConnectorOut struct {
	ID            string              `json:"id"`
	Name          string              `json:"name"`
	Status        string              `json:"status" doc:"online, offline or revoked"`
	Labels        map[string]string   `json:"labels" doc:"labels run_command selectors match: the host's own, overridden by server_labels"`
	ServerLabels  map[string]string   `json:"server_labels" doc:"labels set through the API"`
	HostLabels    map[string]string   `json:"host_labels" doc:"labels the host reported (--labels), while online"`
	AllowList     []string            `json:"allow_list" doc:"server-side command patterns; empty allows every command (the host's own allow-list still applies)"`
	HostAllowList bool                `json:"host_allow_list" doc:"the host runs with its own allow-list file (while online)"`
	Hostname      string              `json:"hostname"`
	OS            string              `json:"os"`
	Arch          string              `json:"arch"`
	Version       string              `json:"version"`
	IP            string              `json:"ip"`
	LastSeen      *time.Time          `json:"last_seen"`
	ConnectedAt   *time.Time          `json:"connected_at"`
	Running       int                 `json:"running" doc:"commands in flight"`
	Kind          string              `json:"kind" doc:"host or kubernetes, as the live connection reports (empty while offline)"`
	Kubernetes    *connector.KubeInfo `json:"kubernetes,omitempty" doc:"a cluster connector's cluster name, version, RBAC verbs, or why the cluster refused its credentials (while online)"`
	// What the host's kernel offers the command sandbox (while online).
	Sandbox           *sandbox.Kernel  `json:"sandbox" doc:"what the host's kernel offers the command sandbox: Landlock ABI, seccomp, user namespaces (null while offline)"`
	ReadOnlyAutoAllow bool             `json:"read_only_auto_allow" doc:"read-only commands may run here without a person: the host's kernel holds them read-only (Landlock)"`
	SandboxNote       string           `json:"sandbox_note" doc:"what the host's sandbox enforces, or why read-only commands ask a person there"`
	HostProfile       *sandbox.Profile `json:"host_sandbox_profile" doc:"the host's own --sandbox-profile, which narrows the project's sandbox profile for every command there: the host has the last word (null: none, or offline)"`
	HostSummary       string           `json:"host_sandbox_summary,omitempty" doc:"host_sandbox_profile in a few words, as the Connectors page shows it"`
	TokenPrefix       string           `json:"token_prefix"`
	RevokedAt         *time.Time       `json:"revoked_at"`
	CreatedAt         time.Time        `json:"created_at"`
	UpdatedAt         time.Time        `json:"updated_at"`
}

// ConnectorListOut lists a project's connectors.
type ConnectorListOut struct {
	Items  []ConnectorOut `json:"items"`
	Total  int            `json:"total"`
	Online int            `json:"online"`
}

// ConnectorCreated carries the token, shown this once.
type ConnectorCreated struct {
	ConnectorOut
	Token          string `json:"token" doc:"ocn_ enrollment token; shown once, only its hash is kept"`
	InstallCommand string `json:"install_command" doc:"the command to run on the host; it names the host allow-list /etc/opsagent/allow, which must exist (one command pattern a line): without it the connector refuses to start"`
}

// ConnectorCreate enrolls a connector.
type ConnectorCreate struct {
	Name      string            `json:"name" validate:"required,min=1,max=63,pattern=^[a-z0-9][a-z0-9._-]{0,62}$"`
	Labels    map[string]string `json:"labels"`
	AllowList []string          `json:"allow_list" validate:"max=200"`
}

// ConnectorUpdate edits a connector; absent fields stay.
type ConnectorUpdate struct {
	Name      *string            `json:"name" validate:"nonnull,min=1,max=63,pattern=^[a-z0-9][a-z0-9._-]{0,62}$"`
	Labels    *map[string]string `json:"labels" validate:"nonnull"`
	AllowList *[]string          `json:"allow_list" validate:"nonnull"`
}

// ConnectorSettings are a project's command limits.
type ConnectorSettings struct {
	CommandTimeoutMaxSeconds int `json:"command_timeout_max_seconds" validate:"min=1,max=86400" doc:"the longest any run_command may run in this project"`
}

func (s *Server) connectorRoutes() []*Route {
	tags := []string{"connectors"}
	idPath := "/api/connectors/{connector_id}"
	return []*Route{
		{Method: "GET", Path: "/api/connectors", Summary: "List the project's connectors with their live status", Tags: tags, Auth: AuthAny, Perm: PermProjectRead, Project: true, Resp: ConnectorListOut{}, Status: 200, MCP: true, Handle: s.handleListConnectors},
		{Method: "POST", Path: "/api/connectors", Summary: "Enroll a connector (its token is shown once)", Tags: tags, Auth: AuthAny, Perm: PermProjectAdmin, Project: true, Body: ConnectorCreate{}, Resp: ConnectorCreated{}, Status: 201, MaxBody: 64 << 10, Handle: s.handleCreateConnector},
		{Method: "GET", Path: "/api/connectors/connect", Summary: "The connectors' WebSocket channel (connector token only; see the connector package for frames)", Tags: tags, Auth: AuthNone, Status: 101, RawBody: true, Handle: s.handleConnectorConnect},
		{Method: "GET", Path: idPath, Summary: "Read a connector", Tags: tags, Auth: AuthAny, Perm: PermProjectRead, Project: true, Resp: ConnectorOut{}, Status: 200, Handle: s.handleGetConnector},
		{Method: "PATCH", Path: idPath, Summary: "Edit a connector's name, labels or server-side allow-list", Tags: tags, Auth: AuthAny, Perm: PermProjectAdmin, Project: true, Body: ConnectorUpdate{}, Resp: ConnectorOut{}, Status: 200, MaxBody: 64 << 10, Handle: s.handleUpdateConnector},
		{Method: "POST", Path: idPath + "/rotate-token", Summary: "Replace the token (the old one stops at once; the live connection drops)", Tags: tags, Auth: AuthAny, Perm: PermProjectAdmin, Project: true, Resp: ConnectorCreated{}, Status: 200, Handle: s.handleRotateConnector},
		{Method: "POST", Path: idPath + "/revoke", Summary: "Revoke a connector (its live connection drops within a second)", Tags: tags, Auth: AuthAny, Perm: PermProjectAdmin, Project: true, Resp: ConnectorOut{}, Status: 200, Handle: s.handleRevokeConnector},
		{Method: "DELETE", Path: idPath, Summary: "Delete a connector", Tags: tags, Auth: AuthAny, Perm: PermProjectAdmin, Project: true, Status: 204, Handle: s.handleDeleteConnector},
		{Method: "GET", Path: "/api/connector-settings", Summary: "The project's command limits", Tags: tags, Auth: AuthAny, Perm: PermProjectRead, Project: true, Resp: ConnectorSettings{}, Status: 200, Handle: s.handleGetConnectorSettings},
		{Method: "PUT", Path: "/api/connector-settings", Summary: "Set the project's command limits", Tags: tags, Auth: AuthAny, Perm: PermRulesWrite, Project: true, Body: ConnectorSettings{}, Resp: ConnectorSettings{}, Status: 200, MaxBody: 4 << 10, Handle: s.handlePutConnectorSettings},
	}
}

var labelKey = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,62}$`)
var labelValue = regexp.MustCompile(`^[A-Za-z0-9._/-]{0,63}$`)

// checkConnector validates labels and allow-list patterns.
func checkConnector(labels map[string]string, allow []string) error {
	if len(labels) > 32 {
		return invalid("at most 32 labels", "value_error", "body", "labels")
	}
	for k, v := range labels {
		if !labelKey.MatchString(k) || !labelValue.MatchString(v) {
			return invalid("label keys and values are letters, digits and ._/- (at most 63)", "value_error", "body", "labels", k)
		}
	}
	if len(allow) > 200 {
		return invalid("at most 200 patterns", "value_error", "body", "allow_list")
	}
	for i, p := range allow {
		if len(p) > 1024 {
			return invalid("a pattern is at most 1024 characters", "value_error", "body", "allow_list", i)
		}
		if _, err := connector.CompileAllowList([]string{p}); err != nil {
			return invalid(err.Error(), "value_error", "body", "allow_list", i)
		}
	}
	return nil
}

// connectorOut merges the stored connector with its live state.
func (s *Server) connectorOut(x *store.Connector) ConnectorOut {
	st := s.connectors.Status(x.ID)
	out := ConnectorOut{ID: x.ID, Name: x.Name, Status: "offline", ServerLabels: x.Labels, HostLabels: map[string]string{},
		AllowList: x.AllowList, Hostname: x.Hostname, OS: x.OS, Version: x.Version, IP: x.LastIP, LastSeen: x.LastSeenAt,
		TokenPrefix: x.Prefix, RevokedAt: x.RevokedAt, CreatedAt: x.CreatedAt, UpdatedAt: x.UpdatedAt}
	if st.Online {
		out.Status = "online"
		h := st.Hello
		out.Hostname, out.OS, out.Arch, out.Version, out.IP = h.Hostname, h.OS, h.Arch, h.Version, st.IP
		out.HostAllowList, out.Running = h.HostAllowList, st.Running
		out.Sandbox, out.HostProfile = h.Sandbox, h.HostProfile
		if p := h.HostProfile; p != nil {
			hp := *p
			if h.Sandbox != nil {
				hp.LandlockABI = h.Sandbox.LandlockABI // the file names none: the host's kernel decides
			}
			out.HostSummary = hp.Summary()
		}
		out.SandboxNote = "this connector does not report a kernel sandbox (an older version): read-only commands ask a person there"
		if h.Sandbox != nil {
			out.ReadOnlyAutoAllow, out.SandboxNote = h.Sandbox.ReadOnlyEnforced(), h.Sandbox.Explain()
		}
		seen, conn := st.LastSeen, st.ConnectedAt
		out.LastSeen, out.ConnectedAt = &seen, &conn
		for k, v := range h.Labels {
			out.HostLabels[k] = v
		}
	}
	out.Kind, out.Kubernetes = kubeOut(st)
	if x.RevokedAt != nil {
		out.Status = "revoked"
	}
	out.Labels = effectiveLabels(out.HostLabels, x.Labels)
	return out
}

func effectiveLabels(host, server map[string]string) map[string]string {
	out := make(map[string]string, len(host)+len(server))
	for k, v := range host {
		out[k] = v
	}
	for k, v := range server {
		out[k] = v
	}
	return out
}

// newConnectorToken returns a token and what is stored of it.
func newConnectorToken() (token, prefix string, hash []byte) {
	prefix = hex.EncodeToString(auth.RandomBytes(connectorPrefixLen / 2))
	secret := auth.RandomToken(32)
	return "ocn_" + prefix + "_" + secret, prefix, auth.HashToken(secret)
}

const connectorPrefixLen = 12

func (s *Server) installCommand(r *http.Request, token string) string {
	base := trimSlash(s.cfg.BaseURL)
	if base == "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		base = scheme + "://" + r.Host
	}
	// With a host allow-list: without one the host runs whatever the server
	// approves. The file must exist, so pasting the line as it is refuses to
	// start until the host's owner has written it (README, connectors).
	return "OPSAGENT_CONNECTOR_TOKEN=" + token + " opsagent connector --server " + base + " --allow " + DefaultAllowFile
}

// DefaultAllowFile is the host allow-list the install command names.
const DefaultAllowFile = "/etc/opsagent/allow"

// handleListConnectors is GET /api/connectors.
func (s *Server) handleListConnectors(c *Ctx) error {
	xs, err := s.db.FindConnectors(c.Context(), c.OrgID(), c.ProjectID())
	if err != nil {
		return err
	}
	out := ConnectorListOut{Items: make([]ConnectorOut, 0, len(xs)), Total: len(xs)}
	for i := range xs {
		o := s.connectorOut(&xs[i])
		if o.Status == "online" {
			out.Online++
		}
		out.Items = append(out.Items, o)
	}
	return c.JSON(200, out)
}

// handleCreateConnector is POST /api/connectors.
func (s *Server) handleCreateConnector(c *Ctx) error {
	var req ConnectorCreate
	if err := c.Bind(&req); err != nil {
		return err
	}
	if err := checkConnector(req.Labels, req.AllowList); err != nil {
		return err
	}
	token, prefix, hash := newConnectorToken()
	x := &store.Connector{OrgID: c.OrgID(), ProjectID: c.ProjectID(), Name: req.Name, Labels: req.Labels,
		AllowList: req.AllowList, Prefix: prefix, TokenHash: hash, CreatedBy: c.ID.UserID}
	if err := s.db.CreateConnector(c.Context(), x); err != nil {
		return err
	}
	c.Audit("connector.created", "success", "connector", x.ID, map[string]any{"name": x.Name, "labels": x.Labels, "allow_list": x.AllowList})
	return c.JSON(201, ConnectorCreated{ConnectorOut: s.connectorOut(x), Token: token, InstallCommand: s.installCommand(c.R, token)})
}

func (s *Server) findConnector(c *Ctx) (*store.Connector, error) {
	id, err := c.IDParam("connector_id")
	if err != nil {
		return nil, err
	}
	return s.db.FindConnector(c.Context(), c.OrgID(), c.ProjectID(), id)
}

// handleGetConnector is GET /api/connectors/{connector_id}.
func (s *Server) handleGetConnector(c *Ctx) error {
	x, err := s.findConnector(c)
	if err != nil {
		return err
	}
	return c.JSON(200, s.connectorOut(x))
}

// handleUpdateConnector is PATCH /api/connectors/{connector_id}.
func (s *Server) handleUpdateConnector(c *Ctx) error {
	var req ConnectorUpdate
	if err := c.Bind(&req); err != nil {
		return err
	}
	x, err := s.findConnector(c)
	if err != nil {
		return err
	}
	setPtr(&x.Name, req.Name)
	setPtr(&x.Labels, req.Labels)
	setPtr(&x.AllowList, req.AllowList)
	if err := checkConnector(x.Labels, x.AllowList); err != nil {
		return err
	}
	if err := s.db.UpdateConnector(c.Context(), x); err != nil {
		return err
	}
	c.Audit("connector.updated", "success", "connector", x.ID, map[string]any{"name": x.Name, "labels": x.Labels, "allow_list": x.AllowList})
	return c.JSON(200, s.connectorOut(x))
}

// handleRotateConnector is POST /api/connectors/{connector_id}/rotate-token.
func (s *Server) handleRotateConnector(c *Ctx) error {
	x, err := s.findConnector(c)
	if err != nil {
		return err
	}
	token, prefix, hash := newConnectorToken()
	if err := s.db.RotateConnectorToken(c.Context(), c.OrgID(), c.ProjectID(), x.ID, prefix, hash); err != nil {
		return err
	}
	x.Prefix = prefix
	s.connectors.Drop(x.ID, "token rotated")
	c.Audit("connector.token_rotated", "success", "connector", x.ID, map[string]any{"name": x.Name})
	return c.JSON(200, ConnectorCreated{ConnectorOut: s.connectorOut(x), Token: token, InstallCommand: s.installCommand(c.R, token)})
}

// handleRevokeConnector is POST /api/connectors/{connector_id}/revoke.
func (s *Server) handleRevokeConnector(c *Ctx) error {
	x, err := s.findConnector(c)
	if err != nil {
		return err
	}
	if err := s.db.RevokeConnector(c.Context(), c.OrgID(), c.ProjectID(), x.ID); err != nil {
		return err
	}
	dropped := s.connectors.Drop(x.ID, "revoked")
	c.Audit("connector.revoked", "success", "connector", x.ID, map[string]any{"name": x.Name, "was_online": dropped})
	x, err = s.db.FindConnector(c.Context(), c.OrgID(), c.ProjectID(), x.ID)
	if err != nil {
		return err
	}
	return c.JSON(200, s.connectorOut(x))
}

// handleDeleteConnector is DELETE /api/connectors/{connector_id}.
func (s *Server) handleDeleteConnector(c *Ctx) error {
	x, err := s.findConnector(c)
	if err != nil {
		return err
	}
	if err := s.db.DeleteConnector(c.Context(), c.OrgID(), c.ProjectID(), x.ID); err != nil {
		return err
	}
	s.connectors.Drop(x.ID, "deleted")
	c.Audit("connector.deleted", "success", "connector", x.ID, map[string]any{"name": x.Name})
	return c.NoContent()
}

// handleGetConnectorSettings is GET /api/connector-settings.
func (s *Server) handleGetConnectorSettings(c *Ctx) error {
	d, err := s.db.ProjectCommandTimeoutMax(c.Context(), c.OrgID(), c.ProjectID())
	if err != nil {
		return err
	}
	return c.JSON(200, ConnectorSettings{CommandTimeoutMaxSeconds: int(d / time.Second)})
}

// handlePutConnectorSettings is PUT /api/connector-settings.
func (s *Server) handlePutConnectorSettings(c *Ctx) error {
	var req ConnectorSettings
	if err := c.Bind(&req); err != nil {
		return err
	}
	if req.CommandTimeoutMaxSeconds < 1 || req.CommandTimeoutMaxSeconds > 86400 {
		return invalid("between 1 and 86400 seconds", "value_error", "body", "command_timeout_max_seconds")
	}
	if err := s.db.SetProjectCommandTimeoutMax(c.Context(), c.OrgID(), c.ProjectID(), time.Duration(req.CommandTimeoutMaxSeconds)*time.Second); err != nil {
		return err
	}
	c.Audit("connector_settings.updated", "success", "project", c.ProjectID(), map[string]any{"command_timeout_max_seconds": req.CommandTimeoutMaxSeconds})
	return c.JSON(200, req)
}

// selectorMatches reports whether labels satisfy every k=v of a selector.
func selectorMatches(sel map[string]string, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// parseSelector reads "k=v,k=v" (a run_command target).
func parseSelector(target string) (map[string]string, bool) {
	out := map[string]string{}
	for _, part := range strings.Split(target, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || k == "" {
			return nil, false
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out, len(out) > 0
}
