package server

import (
	"context"
	"errors"
	"time"

	"github.com/opsagent/opsagent/scheduler"
	"github.com/opsagent/opsagent/server/webhook/pipeline"
)

// installWebhooks sets up the receiver's state, the approval handlers and
// the incident archiver. New calls it before the route table is built.
func (s *Server) installWebhooks() {
	s.wh = pipeline.New(pipeline.Deps{DB: s.db, Secrets: s.secrets, WakeTasks: func() { s.tasks.Wake() },
		Archive: s.archiveIncident, Windows: s.activeWindow, Logger: s.log, Now: func() time.Time { return s.Now() }, Telemetry: s.metrics,
		Dispatched: s.webhookDispatchedToChat})
	s.approvalHandlers = map[string]ApprovalHandler{} // webhook_event approvals the store carries out
	if s.incidentArchiver == nil {
		s.incidentArchiver = ragArchiver{kb: s.rag}
	}
}

// SetIncidentArchiver replaces the rag store as the place resolved
// incidents are filed (tools that keep them elsewhere).
func (s *Server) SetIncidentArchiver(a IncidentArchiver) { s.incidentArchiver = a }

// SetApprovalHandler plugs in the execution of one approval kind (tool_call).
func (s *Server) SetApprovalHandler(kind string, h ApprovalHandler) { s.approvalHandlers[kind] = h }

// registerWebhookJobs adds the retention sweep (events past their
// webhook's retention) and approval expiry to the job runner.
func (s *Server) registerWebhookJobs(r *scheduler.Runner) error {
	if err := r.Add("webhook-retention", "@every 1h", s.SweepWebhookRetention); err != nil {
		return err
	}
	return r.Add("approval-expiry", "@every 1m", s.ExpireApprovals)
}

// SweepWebhookRetention deletes events older than their webhook's
// retention (the webhook-retention job; tests call it directly).
func (s *Server) SweepWebhookRetention(ctx context.Context) error {
	n, err := s.db.SweepWebhookEvents(ctx, s.Now(), 1000)
	if n > 0 {
		s.log.Info("webhook events past retention deleted", "count", n)
	}
	return errors.Join(err, s.SweepChanges(ctx))
}
