package server

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/opsagent/opsagent/server/agent/runner"
	"github.com/opsagent/opsagent/server/auth"
	"github.com/opsagent/opsagent/server/connector"
	"github.com/opsagent/opsagent/server/tools"
	"github.com/opsagent/opsagent/store"
)

// installConnectors starts the hub that holds the connectors' connections.
func (s *Server) installConnectors() {
	s.connectors = connector.NewHub(connector.Options{
		Heartbeat: s.cfg.ConnectorHeartbeat,
		Logger:    s.log,
		Seen: func(ctx context.Context, seen []connector.Seen) {
			rows := make([]store.ConnectorSeen, len(seen))
			for i, x := range seen {
				rows[i] = store.ConnectorSeen{ID: x.ConnectorID, Hostname: x.Hello.Hostname, OS: x.Hello.OS,
					Version: x.Hello.Version, IP: x.IP, At: x.At}
			}
			if err := s.db.TouchConnectors(ctx, rows); err != nil {
				s.log.Warn("connectors: last-seen times not saved", "count", len(rows), "err", err)
			}
		},
	})
	s.SetConnectorCounter(s.connectors.Online)
}

// handleConnectorConnect is GET /api/connectors/connect: the WebSocket a
// connector dials. Only an ocn_ token opens it, and nothing else does: a
// user's token or API key is refused here, and a connector token is
// refused by every other route.
func (s *Server) handleConnectorConnect(c *Ctx) error {
	tok, ok := strings.CutPrefix(c.R.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return connectorUnauthorized
	}
	x, err := s.authenticateConnector(c.Context(), tok)
	if err != nil {
		s.audit(c.Context(), AuditEvent{Action: "connector.auth_failed", Outcome: "failure", IP: s.clientIP(c.R),
			UserAgent: truncate(c.R.UserAgent(), 256), Detail: map[string]any{"reason": err.Error()}})
		return err
	}
	// The server's read timeout is for requests; a connection lives on.
	_ = http.NewResponseController(c.W).SetReadDeadline(time.Time{})
	ws, err := websocket.Accept(c.W, c.R, nil)
	if err != nil {
		return nil // Accept answered the client
	}
	// Not the request's context: the connection outlives the handler's
	// pipeline; Serve closes the hub after the agent runs have stopped.
	s.connectors.Serve(context.Background(), ws, connector.Identity{ConnectorID: x.ID, OrgID: x.OrgID, ProjectID: x.ProjectID, Name: x.Name}, s.clientIP(c.R))
	return nil
}

var connectorUnauthorized = &store.Error{Code: store.EUnauthorized, Message: "Invalid connector token", Reason: "invalid_connector_token"}

// authenticateConnector resolves an ocn_ token to its connector.
func (s *Server) authenticateConnector(ctx context.Context, tok string) (*store.Connector, error) {
	if len(tok) > 128 || len(tok) < 4+connectorPrefixLen+2 || !strings.HasPrefix(tok, "ocn_") || tok[4+connectorPrefixLen] != '_' {
		return nil, connectorUnauthorized
	}
	prefix, secret := tok[4:4+connectorPrefixLen], tok[4+connectorPrefixLen+1:]
	x, err := s.db.FindConnectorByPrefix(ctx, prefix)
	if store.IsNotFound(err) {
		_ = subtle.ConstantTimeCompare(auth.HashToken(secret), make([]byte, 32)) // same work either way
		return nil, connectorUnauthorized
	}
	if err != nil {
		return nil, err
	}
	if subtle.ConstantTimeCompare(auth.HashToken(secret), x.TokenHash) != 1 {
		return nil, connectorUnauthorized
	}
	if x.RevokedAt != nil {
		return nil, &store.Error{Code: store.EUnauthorized, Message: "This connector was revoked", Reason: "connector_revoked"}
	}
	return x, nil
}

// connectorRemote runs one agent run's commands on its project's connectors.
type connectorRemote struct {
	s                *Server
	orgID, projectID string
}

func (s *Server) connectorRemote(orgID, projectID string) tools.Remote {
	return &connectorRemote{s: s, orgID: orgID, projectID: projectID}
}

// Resolve implements tools.Remote.
func (r *connectorRemote) Resolve(ctx context.Context, target, command string) ([]tools.RemoteHost, error) {
	xs, err := r.s.db.FindConnectors(ctx, r.orgID, r.projectID)
	if err != nil {
		return nil, fmt.Errorf("the project's connectors could not be read; the command did not run")
	}
	var picked []*store.Connector
	sel, isSel := parseSelector(target)
	for i := range xs {
		x := &xs[i]
		if x.RevokedAt != nil {
			continue
		}
		if isSel {
			st := r.s.connectors.Status(x.ID)
			if st.Online && selectorMatches(sel, effectiveLabels(st.Hello.Labels, x.Labels)) {
				picked = append(picked, x)
			}
		} else if x.Name == target {
			picked = append(picked, x)
		}
	}
	if len(picked) == 0 {
		names := make([]string, 0, len(xs))
		for i := range xs {
			if xs[i].RevokedAt == nil && r.s.connectors.Status(xs[i].ID).Online {
				names = append(names, xs[i].Name)
			}
		}
		sort.Strings(names)
		known := "no connector is online in this project"
		if len(names) > 0 {
			known = "online connectors: " + strings.Join(names, ", ")
		}
		if isSel {
			return nil, fmt.Errorf("no online connector matches the labels %q (%s); the command did not run", target, known)
		}
		return nil, fmt.Errorf("no connector %q in this project (%s); the command did not run", target, known)
	}
	hosts := make([]tools.RemoteHost, 0, len(picked))
	for _, x := range picked {
		st := r.s.connectors.Status(x.ID)
		if !st.Online {
			return nil, fmt.Errorf("connector %q is offline (last seen %s); the command did not run", x.Name, lastSeenText(x.LastSeenAt))
		}
		if len(x.AllowList) > 0 {
			al, err := connector.CompileAllowList(x.AllowList)
			if err != nil || !al.Allows(command) {
				return nil, fmt.Errorf("connector %q's server-side allow-list does not allow this command; it did not run. "+
					"The project's administrators decide what runs there; do not try to reach the same effect another way", x.Name)
			}
		}
		hosts = append(hosts, tools.RemoteHost{ID: x.ID, Name: x.Name, Hostname: st.Hello.Hostname})
	}
	return hosts, nil
}

func lastSeenText(t *time.Time) string {
	if t == nil {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}

// Run implements tools.Remote. Output streams out as the host sends it;
// the server keeps none of it beyond what out keeps.
func (r *connectorRemote) Run(ctx context.Context, h tools.RemoteHost, cmd tools.RemoteCommand, out io.Writer) (tools.RemoteResult, error) {
	prof := cmd.Sandbox
	res, err := r.s.connectors.Call(ctx, h.ID, connector.Run{Command: cmd.Command, Env: cmd.Env,
		TimeoutMS: cmd.Timeout.Milliseconds(), MaxOutput: maxStreamedOutput, Sandbox: &prof}, out)
	if err == connector.ErrOffline {
		return tools.RemoteResult{}, fmt.Errorf("connector %q went offline before the command was sent; it did not run", h.Name)
	}
	if err != nil {
		return tools.RemoteResult{}, err
	}
	return tools.RemoteResult{ExitCode: res.ExitCode, Duration: time.Duration(res.DurationMS) * time.Millisecond,
		TimedOut: res.TimedOut, Refused: res.Refused, Error: res.Error, Truncated: res.Truncated,
		SandboxRefused: res.SandboxRefused}, nil
}

// maxStreamedOutput is how much output a connector forwards for one call;
// the server keeps only the head and tail of it.
const maxStreamedOutput = 1 << 30

// MaxTimeout implements tools.Remote.
func (r *connectorRemote) MaxTimeout(ctx context.Context) time.Duration {
	d, err := r.s.db.ProjectCommandTimeoutMax(ctx, r.orgID, r.projectID)
	if err != nil {
		return 0
	}
	return d
}

// allSecretValues are every env secret value of the project and its org,
// for masking what connectors send back.
func (s *Server) allSecretValues(orgID, projectID string) func(ctx context.Context) ([]string, error) {
	return func(ctx context.Context) ([]string, error) { return s.secrets.Values(ctx, orgID, projectID) }
}

// withApprovedTarget hands the tool the target as the approval showed it
// (the exact hosts), so a label selector that matches other hosts by the
// time the call runs is refused instead of reaching hosts nobody approved.
func (s *Server) withApprovedTarget(ctx context.Context, run runner.RunInfo, approvalID string) context.Context {
	a, err := s.db.FindApproval(ctx, run.OrgID, run.ProjectID, approvalID)
	if err != nil {
		return ctx
	}
	var subj ToolCallSubject
	if json.Unmarshal([]byte(a.Subject), &subj) != nil {
		return ctx
	}
	return tools.WithApprovedCommand(tools.WithApprovedTarget(ctx, subj.Target), subj.Command)
}
