package server

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/opsagent/opsagent/store"
)

// Retention: what each org keeps, and the job that removes the rest in
// small batches (each its own short transaction, so requests keep writing
// between them), then hands the freed pages back with incremental vacuum.
// Defaults are flags (deploy/README.md); an org may override each.

// retentionBatch bounds the rows one transaction deletes.
const retentionBatch = 500

// auditSegmentMax bounds the events one archive segment holds.
const auditSegmentMax = 1000

// RetentionIn sets an org's retention; a null field returns to the server
// default, 0 keeps forever.
type RetentionIn struct {
	TranscriptsDays *int `json:"transcripts_days" doc:"days a finished session keeps its transcript and events (null: server default; 0: forever)"`
	SessionsDays    *int `json:"sessions_days" doc:"days a finished session is kept at all (null: server default; 0: forever)"`
	AuditDays       *int `json:"audit_days" doc:"days audit events stay in the database before moving to an archive segment (null: server default; 0: forever)"`
}

// RetentionOut is an org's effective retention and where each value comes from.
type RetentionOut struct {
	TranscriptsDays int               `json:"transcripts_days"`
	SessionsDays    int               `json:"sessions_days"`
	AuditDays       int               `json:"audit_days"`
	Source          map[string]string `json:"source" doc:"per field: org (set here) or default (server flag)"`
	// Server-wide: mail files and webhook events are not kept per org here.
	OutboxDays int    `json:"outbox_days" doc:"server-wide (--retention-outbox-days): days mail files stay in DATA_DIR/outbox"`
	Note       string `json:"note"`
}

func (s *Server) retentionRoutes() []*Route {
	tags := []string{"organizations"}
	return []*Route{
		{Method: "GET", Path: "/api/organizations/{org_id}/retention", Summary: "Effective retention of the organization's sessions, transcripts and audit log", Tags: tags,
			Auth: AuthAny, Perm: PermOrgRead, Resp: RetentionOut{}, Status: 200, Handle: s.handleGetRetention},
		{Method: "PUT", Path: "/api/organizations/{org_id}/retention", Summary: "Set the organization's retention (null returns a field to the server default)", Tags: tags,
			Auth: AuthAny, Perm: PermOrgAdmin, Body: RetentionIn{}, Resp: RetentionOut{}, Status: 200, MaxBody: 4 << 10, Handle: s.handlePutRetention},
	}
}

func (s *Server) retentionOut(p *store.RetentionPolicy) RetentionOut {
	out := RetentionOut{Source: map[string]string{}, OutboxDays: s.cfg.RetentionOutboxDays,
		Note: "webhook events follow each webhook's retention_days; audit events past audit_days move to DATA_DIR/audit-archive and the chain keeps verifying from its anchor"}
	pick := func(name string, org *int, def int) int {
		if org != nil {
			out.Source[name] = "org"
			return *org
		}
		out.Source[name] = "default"
		return def
	}
	out.TranscriptsDays = pick("transcripts_days", p.TranscriptsDays, s.cfg.RetentionTranscriptsDays)
	out.SessionsDays = pick("sessions_days", p.SessionsDays, s.cfg.RetentionSessionsDays)
	out.AuditDays = pick("audit_days", p.AuditDays, s.cfg.RetentionAuditDays)
	return out
}

func (s *Server) handleGetRetention(c *Ctx) error {
	p, err := s.db.GetRetention(c.Context(), c.OrgID())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s.retentionOut(p))
}

func (s *Server) handlePutRetention(c *Ctx) error {
	var in RetentionIn
	if err := c.Bind(&in); err != nil {
		return err
	}
	for name, v := range map[string]*int{"transcripts_days": in.TranscriptsDays, "sessions_days": in.SessionsDays, "audit_days": in.AuditDays} {
		if v != nil && (*v < 0 || *v > 36500) {
			return invalid("Input should be between 0 (forever) and 36500 days", "range", "body", name)
		}
	}
	p := &store.RetentionPolicy{OrgID: c.OrgID(), TranscriptsDays: in.TranscriptsDays, SessionsDays: in.SessionsDays, AuditDays: in.AuditDays}
	if err := s.db.PutRetention(c.Context(), p); err != nil {
		return err
	}
	out := s.retentionOut(p)
	c.Audit("retention.updated", "success", "organization", c.OrgID(), map[string]any{
		"transcripts_days": out.TranscriptsDays, "sessions_days": out.SessionsDays, "audit_days": out.AuditDays})
	return c.JSON(http.StatusOK, out)
}

// RetentionReport counts what one run removed.
type RetentionReport struct {
	Transcripts, Sessions, AuditArchived, OutboxFiles int
}

// RunRetention applies every org's retention once (the hourly job; tests
// and operators call it directly).
func (s *Server) RunRetention(ctx context.Context) (RetentionReport, error) {
	var rep RetentionReport
	orgs, err := s.db.OrgIDs(ctx)
	if err != nil {
		return rep, err
	}
	now := s.Now()
	for _, org := range orgs {
		p, err := s.db.GetRetention(ctx, org)
		if err != nil {
			return rep, err
		}
		eff := s.retentionOut(p)
		if d := eff.TranscriptsDays; d > 0 {
			n, err := drain(ctx, func() (int, error) { return s.db.PurgeTranscripts(ctx, org, now.AddDate(0, 0, -d), retentionBatch) })
			rep.Transcripts += n
			if err != nil {
				return rep, err
			}
		}
		if d := eff.SessionsDays; d > 0 {
			n, err := drain(ctx, func() (int, error) { return s.db.PurgeSessions(ctx, org, now.AddDate(0, 0, -d), retentionBatch) })
			rep.Sessions += n
			if err != nil {
				return rep, err
			}
		}
		if d := eff.AuditDays; d > 0 {
			n, err := drain(ctx, func() (int, error) { return s.archiveAudit(ctx, org, now.AddDate(0, 0, -d)) })
			rep.AuditArchived += n
			if err != nil {
				return rep, err
			}
		}
	}
	if d := s.cfg.RetentionOutboxDays; d > 0 {
		rep.OutboxFiles = s.purgeOutbox(now.AddDate(0, 0, -d))
	}
	if rep.Transcripts+rep.Sessions+rep.AuditArchived > 0 {
		if err := s.vacuumFreed(ctx); err != nil {
			return rep, err
		}
		s.log.Info("retention applied", "transcripts", rep.Transcripts, "sessions", rep.Sessions,
			"audit_archived", rep.AuditArchived, "outbox_files", rep.OutboxFiles)
	}
	return rep, nil
}

// drain calls batch until it removes less than a full batch.
func drain(ctx context.Context, batch func() (int, error)) (int, error) {
	total := 0
	for ctx.Err() == nil {
		n, err := batch()
		total += n
		if err != nil || n < retentionBatch {
			return total, err
		}
	}
	return total, ctx.Err()
}

// vacuumFreed returns free pages to the file system a few MB at a time, so
// the writer is never held long.
func (s *Server) vacuumFreed(ctx context.Context) error {
	for i := 0; i < 100 && ctx.Err() == nil; i++ {
		free, err := s.db.FreePages(ctx)
		if err != nil || free == 0 {
			return err
		}
		if err := s.db.IncrementalVacuum(ctx, 2000); err != nil {
			return err
		}
	}
	return nil
}

// purgeOutbox removes mail files older than cutoff from DATA_DIR/outbox.
func (s *Server) purgeOutbox(cutoff time.Time) int {
	dir := s.cfg.Path("outbox")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".eml") {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.ModTime().Before(cutoff) && os.Remove(filepath.Join(dir, e.Name())) == nil {
			n++
		}
	}
	return n
}
