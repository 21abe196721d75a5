package server

import (
	"context"
	"time"

	"github.com/opsagent/opsagent/server/heartbeat"
	"github.com/opsagent/opsagent/store"
)

// Heartbeat checks (dead-man's switches): a cron job or a backup pings
// its check's URL; the sweep job (sweepHeartbeats) turns a ping that did
// not come in time into an incident, once per miss. Pings are
// unauthenticated: the secret in the path is the credential.

// HeartbeatOut is a check.
type HeartbeatOut struct {
	ID             string     `json:"id"`
	ProjectID      string     `json:"project_id"`
	Name           string     `json:"name"`
	Schedule       string     `json:"schedule" doc:"5-field cron expression; empty when period_seconds is used"`
	Timezone       string     `json:"timezone"`
	PeriodSeconds  int64      `json:"period_seconds"`
	GraceSeconds   int64      `json:"grace_seconds"`
	TaskID         *string    `json:"task_id" doc:"task run on each miss"`
	Enabled        bool       `json:"enabled"`
	Status         string     `json:"status" doc:"new, up, started, down"`
	LastPingAt     *time.Time `json:"last_ping_at"`
	LastPingKind   string     `json:"last_ping_kind" doc:"success, fail or start"`
	LastDurationMS *int64     `json:"last_duration_ms" doc:"between the last start ping and its finish"`
	DueAt          time.Time  `json:"due_at" doc:"when the next ping is expected"`
	DeadlineAt     time.Time  `json:"deadline_at" doc:"due_at plus grace: past it the check is missed"`
	Misses         int        `json:"misses"`
	IncidentID     *string    `json:"incident_id" doc:"the open incident of the current miss"`
	BadgeURL       string     `json:"badge_url" doc:"public SVG badge (its token is not the ping secret)"`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      time.Time  `json:"updated_at"`
}

// HeartbeatCreatedOut is a new check with its ping URL, shown only here:
// only a hash of the secret is stored.
type HeartbeatCreatedOut struct {
	HeartbeatOut
	PingURL string `json:"ping_url" doc:"POST or GET it on success; append /start before the job and /fail on failure"`
	Secret  string `json:"secret" doc:"the secret in ping_url; shown once"`
}

// HeartbeatDetailOut is a check with its latest pings.
type HeartbeatDetailOut struct {
	HeartbeatOut
	Pings []HeartbeatPingOut `json:"pings"`
}

// HeartbeatPingOut is one ping.
type HeartbeatPingOut struct {
	ID         string    `json:"id"`
	At         time.Time `json:"at"`
	Kind       string    `json:"kind"`
	DurationMS *int64    `json:"duration_ms"`
	Miss       int       `json:"miss" doc:"the miss this ping opened (0: none)"`
}

// HeartbeatListOut lists checks.
type HeartbeatListOut struct {
	Items []HeartbeatOut `json:"items"`
	Total int            `json:"total"`
}

// HeartbeatCreate creates a check: a cron schedule (with time zone) or a period, and a grace time.
type HeartbeatCreate struct {
	Name          string `json:"name" validate:"required,min=1,max=200"`
	Schedule      string `json:"schedule" validate:"max=200"`
	Timezone      string `json:"timezone" validate:"max=64"`
	PeriodSeconds int64  `json:"period_seconds" validate:"omitzero,gte=60,lte=31622400" doc:"seconds between pings (60 s to 366 days); 0 or absent with a schedule"`
	GraceSeconds  int64  `json:"grace_seconds" validate:"required,gte=60,lte=2678400" doc:"how late a ping may be (60 s to 31 days)"`
	TaskID        string `json:"task_id" validate:"max=64"`
	Enabled       *bool  `json:"enabled"`
}

// HeartbeatUpdate edits a check; absent fields stay.
type HeartbeatUpdate struct {
	Name          *string `json:"name" validate:"nonnull,min=1,max=200"`
	Schedule      *string `json:"schedule" validate:"nonnull,max=200"`
	Timezone      *string `json:"timezone" validate:"nonnull,max=64"`
	PeriodSeconds *int64  `json:"period_seconds" validate:"nonnull,omitzero,gte=60,lte=31622400" doc:"seconds between pings (60 s to 366 days); 0 with a schedule"`
	GraceSeconds  *int64  `json:"grace_seconds" validate:"nonnull,gte=60,lte=2678400" doc:"how late a ping may be (60 s to 31 days)"`
	TaskID        *string `json:"task_id" validate:"max=64"`
	Enabled       *bool   `json:"enabled" validate:"nonnull"`
}

// PingOut answers a ping.
type PingOut struct {
	OK     bool   `json:"ok"`
	Status string `json:"status" doc:"the check's status after the ping"`
}

func (s *Server) heartbeatRoutes() []*Route {
	tags := []string{"heartbeats"}
	ping := []string{"heartbeat pings"}
	var rs []*Route
	for _, kind := range []string{"", "/start", "/fail"} {
		for _, m := range []string{"POST", "GET"} {
			rs = append(rs, &Route{Method: m, Path: "/api/ping/{ping_secret}" + kind, Summary: "Ping a heartbeat check (" + pingKind(kind) + "); the secret is the credential",
				Tags: ping, Auth: AuthNone, Resp: PingOut{}, Status: 200, MaxBody: 16 << 10, RawBody: true, Handle: s.pingHandler(pingKind(kind))})
		}
	}
	return append(rs,
		&Route{Method: "GET", Path: "/api/heartbeats", Summary: "List the project's heartbeat checks", Tags: tags, Auth: AuthAny, Perm: PermWebhooksRead, Project: true, Resp: HeartbeatListOut{}, Status: 200, MCP: true, Handle: s.handleListHeartbeats},
		&Route{Method: "POST", Path: "/api/heartbeats", Summary: "Create a heartbeat check (the ping secret is shown once)", Tags: tags, Auth: AuthAny, Perm: PermWebhooksWrite, Project: true, Body: HeartbeatCreate{}, Resp: HeartbeatCreatedOut{}, Status: 201, MaxBody: 16 << 10, Handle: s.handleCreateHeartbeat},
		&Route{Method: "GET", Path: "/api/heartbeats/{check_id}", Summary: "Read a heartbeat check with its latest pings", Tags: tags, Auth: AuthAny, Perm: PermWebhooksRead, Project: true, Resp: HeartbeatDetailOut{}, Status: 200, MCP: true, Handle: s.handleGetHeartbeat},
		&Route{Method: "PATCH", Path: "/api/heartbeats/{check_id}", Summary: "Edit a heartbeat check", Tags: tags, Auth: AuthAny, Perm: PermWebhooksWrite, Project: true, Body: HeartbeatUpdate{}, Resp: HeartbeatOut{}, Status: 200, MaxBody: 16 << 10, Handle: s.handleUpdateHeartbeat},
		&Route{Method: "DELETE", Path: "/api/heartbeats/{check_id}", Summary: "Delete a heartbeat check", Tags: tags, Auth: AuthAny, Perm: PermWebhooksWrite, Project: true, Status: 204, Handle: s.handleDeleteHeartbeat},
		&Route{Method: "GET", Path: "/api/heartbeat-badges/{badge_token}", Summary: "SVG badge of a heartbeat check", Tags: ping, Auth: AuthNone, Status: 200, Handle: s.handleHeartbeatBadge},
	)
}

func pingKind(suffix string) string {
	switch suffix {
	case "/start":
		return store.PingStart
	case "/fail":
		return store.PingFail
	}
	return store.PingSuccess
}

func (s *Server) heartbeatOut(c *store.HeartbeatCheck) HeartbeatOut {
	return HeartbeatOut{ID: c.ID, ProjectID: c.ProjectID, Name: c.Name, Schedule: c.Schedule, Timezone: c.Timezone,
		PeriodSeconds: int64(c.Period / time.Second), GraceSeconds: int64(c.Grace / time.Second), TaskID: optStr(c.TaskID),
		Enabled: c.Enabled, Status: c.Status, LastPingAt: c.LastPingAt, LastPingKind: c.LastPingKind, LastDurationMS: c.LastDurationMS,
		DueAt: c.DueAt, DeadlineAt: c.DeadlineAt, Misses: c.Misses, IncidentID: optStr(c.IncidentID),
		BadgeURL: trimSlash(s.cfg.BaseURL) + "/api/heartbeat-badges/" + c.BadgeToken, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

// checkSchedule validates a check's schedule as a 422 at the field at fault.
func checkSchedule(c *store.HeartbeatCheck) error {
	if c.Schedule != "" && c.Timezone == "" {
		c.Timezone = "UTC"
	}
	if field, err := heartbeat.Validate(c.Schedule, c.Timezone, c.Period, c.Grace); err != nil {
		return invalid(err.Error(), "value_error", "body", field)
	}
	return nil
}

// handleListHeartbeats is GET /api/heartbeats.
func (s *Server) handleListHeartbeats(c *Ctx) error {
	cs, err := s.db.FindHeartbeats(c.Context(), c.OrgID(), c.ProjectID())
	if err != nil {
		return err
	}
	out := HeartbeatListOut{Items: make([]HeartbeatOut, 0, len(cs)), Total: len(cs)}
	for i := range cs {
		out.Items = append(out.Items, s.heartbeatOut(&cs[i]))
	}
	return c.JSON(200, out)
}

// handleCreateHeartbeat is POST /api/heartbeats.
func (s *Server) handleCreateHeartbeat(c *Ctx) error {
	var req HeartbeatCreate
	if err := c.Bind(&req); err != nil {
		return err
	}
	if req.TaskID != "" && !store.ValidID(req.TaskID) {
		return invalid("task_id is not a task id", "value_error", "body", "task_id")
	}
	secret, hash := heartbeat.NewToken()
	hc := &store.HeartbeatCheck{OrgID: c.OrgID(), ProjectID: c.ProjectID(), Name: req.Name, TokenHash: hash,
		BadgeToken: heartbeatBadgeToken(), Schedule: req.Schedule, Timezone: req.Timezone, Period: time.Duration(req.PeriodSeconds) * time.Second,
		Grace: time.Duration(req.GraceSeconds) * time.Second, TaskID: req.TaskID, Enabled: req.Enabled == nil || *req.Enabled, CreatedBy: c.ID.UserID}
	if err := checkSchedule(hc); err != nil {
		return err
	}
	heartbeat.Schedule(hc, s.Now())
	if err := s.db.CreateHeartbeat(c.Context(), hc); err != nil {
		return err
	}
	c.Audit("heartbeat.created", "success", "heartbeat_check", hc.ID, map[string]any{"name": hc.Name, "schedule": hc.Schedule, "period_seconds": req.PeriodSeconds})
	return c.JSON(201, HeartbeatCreatedOut{HeartbeatOut: s.heartbeatOut(hc), PingURL: trimSlash(s.cfg.BaseURL) + "/api/ping/" + secret, Secret: secret})
}

func heartbeatBadgeToken() string {
	_, h := heartbeat.NewToken() // 64 hex characters, unrelated to the ping secret
	return h[:32]
}

// handleGetHeartbeat is GET /api/heartbeats/{check_id}.
func (s *Server) handleGetHeartbeat(c *Ctx) error {
	id, err := c.IDParam("check_id")
	if err != nil {
		return err
	}
	hc, err := s.db.FindHeartbeat(c.Context(), c.OrgID(), c.ProjectID(), id)
	if err != nil {
		return err
	}
	ps, err := s.db.FindHeartbeatPings(c.Context(), hc.ID, 50)
	if err != nil {
		return err
	}
	out := HeartbeatDetailOut{HeartbeatOut: s.heartbeatOut(hc), Pings: make([]HeartbeatPingOut, 0, len(ps))}
	for _, p := range ps {
		out.Pings = append(out.Pings, HeartbeatPingOut{ID: p.ID, At: p.At, Kind: p.Kind, DurationMS: p.DurationMS, Miss: p.Miss})
	}
	return c.JSON(200, out)
}

// handleUpdateHeartbeat is PATCH /api/heartbeats/{check_id}. A changed
// schedule counts from now.
func (s *Server) handleUpdateHeartbeat(c *Ctx) error {
	id, err := c.IDParam("check_id")
	if err != nil {
		return err
	}
	var req HeartbeatUpdate
	if err := c.Bind(&req); err != nil {
		return err
	}
	if req.TaskID != nil && *req.TaskID != "" && !store.ValidID(*req.TaskID) {
		return invalid("task_id is not a task id", "value_error", "body", "task_id")
	}
	p := store.HeartbeatPatch{Name: req.Name, Schedule: req.Schedule, Timezone: req.Timezone, TaskID: req.TaskID, Enabled: req.Enabled}
	if req.PeriodSeconds != nil {
		d := time.Duration(*req.PeriodSeconds) * time.Second
		p.Period = &d
	}
	if req.GraceSeconds != nil {
		d := time.Duration(*req.GraceSeconds) * time.Second
		p.Grace = &d
	}
	now := s.Now()
	hc, err := s.db.UpdateHeartbeat(c.Context(), c.OrgID(), c.ProjectID(), id, p, func(hc *store.HeartbeatCheck) error {
		if err := checkSchedule(hc); err != nil {
			return err
		}
		if hc.Status != store.HeartbeatDown {
			heartbeat.Schedule(hc, now)
		}
		return nil
	})
	if err != nil {
		return err
	}
	c.Audit("heartbeat.updated", "success", "heartbeat_check", hc.ID, map[string]any{"enabled": hc.Enabled, "schedule": hc.Schedule})
	return c.JSON(200, s.heartbeatOut(hc))
}

// handleDeleteHeartbeat is DELETE /api/heartbeats/{check_id}.
func (s *Server) handleDeleteHeartbeat(c *Ctx) error {
	id, err := c.IDParam("check_id")
	if err != nil {
		return err
	}
	if err := s.db.DeleteHeartbeat(c.Context(), c.OrgID(), c.ProjectID(), id); err != nil {
		return err
	}
	c.Audit("heartbeat.deleted", "success", "heartbeat_check", id, nil)
	return c.NoContent()
}

// pingHandler is POST|GET /api/ping/{ping_secret}[/start|/fail]. The rate
// limit per address comes before anything else, so guessing secrets is
// slow; the secret is looked up by its hash.
func (s *Server) pingHandler(kind string) func(c *Ctx) error {
	return func(c *Ctx) error {
		markAudited(c.Context()) // pings are recorded as pings; misses and recoveries are audited
		if ok, retry := s.bx().pingIP.Allow(c.ClientIP()); !ok {
			return &RateLimitError{RetryAfter: retry}
		}
		secret := c.Param("ping_secret")
		if len(secret) < 20 || len(secret) > 100 {
			return store.NotFound("heartbeat check")
		}
		hash := heartbeat.Hash(secret)
		if ok, retry := s.bx().pingCheck.Allow(hash); !ok {
			return &RateLimitError{RetryAfter: retry}
		}
		o, err := s.db.RecordHeartbeatPing(c.Context(), hash, kind, heartbeat.NextDue)
		if err != nil {
			return err
		}
		s.afterHeartbeat(c.Context(), o)
		return c.JSON(200, PingOut{OK: true, Status: o.Check.Status})
	}
}

// afterHeartbeat does what follows a committed miss or recovery: wake the
// task scheduler for the run, audit, archive a resolved incident.
func (s *Server) afterHeartbeat(ctx context.Context, o *store.HeartbeatOutcome) {
	hc := o.Check
	if o.OpenedID != "" {
		s.audit(ctx, AuditEvent{Action: "heartbeat.missed", Outcome: "success", OrgID: hc.OrgID, ProjectID: hc.ProjectID,
			TargetType: "heartbeat_check", TargetID: hc.ID, Detail: map[string]any{"incident_id": o.OpenedID, "miss": hc.Misses, "session_id": o.SessionID}})
	}
	if o.SessionID != "" && s.tasks != nil {
		s.tasks.Wake()
	}
	if o.Resolved != nil {
		s.audit(ctx, AuditEvent{Action: "heartbeat.recovered", Outcome: "success", OrgID: hc.OrgID, ProjectID: hc.ProjectID,
			TargetType: "heartbeat_check", TargetID: hc.ID, Detail: map[string]any{"incident_id": o.Resolved.ID}})
		s.archiveIncident(ctx, o.Resolved)
	}
}

// sweepHeartbeats is the heartbeat job: every check past its deadline
// becomes a miss (store.SweepHeartbeats makes that exactly once).
func (s *Server) sweepHeartbeats(ctx context.Context) error {
	for {
		outs, err := s.db.SweepHeartbeats(ctx, 100)
		for i := range outs {
			s.afterHeartbeat(ctx, &outs[i])
		}
		if err != nil || len(outs) < 100 {
			return err
		}
	}
}

// RunHeartbeatSweep runs the heartbeat job once (tests and the CLI use it).
func (s *Server) RunHeartbeatSweep(ctx context.Context) error { return s.sweepHeartbeats(ctx) }

// handleHeartbeatBadge is GET /api/heartbeat-badges/{badge_token}.
func (s *Server) handleHeartbeatBadge(c *Ctx) error {
	tok := c.Param("badge_token")
	if len(tok) != 32 {
		return errNotFoundRoute
	}
	hc, err := s.db.FindHeartbeatByBadge(c.Context(), tok)
	if err != nil {
		return err
	}
	label, color := heartbeat.Badge(hc)
	c.W.Header().Set("Content-Type", "image/svg+xml; charset=utf-8")
	c.W.Header().Set("Cache-Control", "no-cache, max-age=60")
	c.W.WriteHeader(200)
	_, err = c.W.Write([]byte(badgeSVG(hc.Name, label, color)))
	return err
}
