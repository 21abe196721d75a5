package server

import (
	"context"
	"os"
	"path/filepath"

	"github.com/opsagent/opsagent/scheduler"
)

// registerJobs adds the platform's own background work to the runner.
func (s *Server) registerJobs(r *scheduler.Runner) error {
	if err := r.Add("account-erasure", "@every 1m", s.runErasures); err != nil {
		return err
	}
	if err := s.registerWebhookJobs(r); err != nil {
		return err
	}
	if err := s.registerClusterJobs(r); err != nil {
		return err
	}
	if err := r.Add("kube-changes", kubeChangesEvery, s.pollKubeChanges); err != nil {
		return err
	}
	if err := r.Add("retention", "@every 1h", func(ctx context.Context) error {
		_, err := s.RunRetention(ctx)
		return err
	}); err != nil {
		return err
	}
	if s.billing.On() {
		if err := r.Add("billing-metering", "@every 1h", s.meterAll); err != nil {
			return err
		}
		if err := r.Add("billing-stripe-usage", "@every 1h", s.reportStripeUsage); err != nil {
			return err
		}
	}
	// Heartbeat misses are noticed within this interval past their deadline.
	if err := r.Add("heartbeats", "@every 15s", s.sweepHeartbeats); err != nil {
		return err
	}
	if err := r.Add("channel-deliveries", "@every 1h", s.PurgeChannelDeliveries); err != nil {
		return err
	}
	if s.db.Shared() { // only a shared database has a knowledge feed (knowledge_prune.go)
		if err := r.Add("knowledge-feed-prune", "@every 1h", s.pruneKnowledgeFeed); err != nil {
			return err
		}
	}
	return r.Add("purge-expired", "@every 1h", s.purgeExpired)
}

// purgeExpired is the cleanup job: expired token blocklist entries, mailed
// tokens, second-factor (WebAuthn) challenges, device grants, old login
// sessions, and the work directories of idle projects.
func (s *Server) purgeExpired(ctx context.Context) error {
	s.revoked.sweep(s.Now())
	if err := s.db.PurgeExpired(ctx); err != nil {
		return err
	}
	return s.sweepWorkDirs(ctx)
}

// RunPurgeExpired runs the cleanup job once (tests and the CLI use it).
func (s *Server) RunPurgeExpired(ctx context.Context) error { return s.purgeExpired(ctx) }

// runErasures is the account-erasure worker: it deletes the data of closed
// accounts and their avatar files.
func (s *Server) runErasures(ctx context.Context) error {
	for {
		done, err := s.db.ProcessErasures(ctx, 50)
		if err != nil {
			return err
		}
		for _, u := range done {
			if u.Avatar != "" {
				os.Remove(s.cfg.Path("avatars", filepath.Base(u.Avatar)))
			}
			for _, org := range u.Orgs {
				if err := s.eraseOrgFiles(ctx, org); err != nil {
					// The sweep below (and at the next runs) retries.
					s.log.Warn("erasure: the files of an organization were not removed", "org_id", org, "err", err)
				}
			}
			s.log.Info("account erased", "user_id", u.UserID)
		}
		if len(done) < 50 {
			return s.sweepErasedOrgFiles(ctx)
		}
	}
}

// RunErasures runs the erasure worker once (tests and the CLI use it).
func (s *Server) RunErasures(ctx context.Context) error { return s.runErasures(ctx) }
