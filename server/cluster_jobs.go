package server

import (
	"context"

	"github.com/opsagent/opsagent/scheduler"
	"github.com/opsagent/opsagent/store"
)

// registerClusterJobs adds the work servers sharing a PostgreSQL database do
// for each other (none on the appliance): a server that died left
// its chat turns running; every other server looks for them, and fails those
// no live server holds, so they show as interrupted and can be continued.
func (s *Server) registerClusterJobs(r *scheduler.Runner) error {
	if !s.db.Shared() {
		return nil
	}
	// A turn whose server died is resumed by another within RunLease of
	// PostgreSQL dropping the dead server's connection (and its run locks).
	if err := r.Add("resume-runs", "@every "+store.RunLease.String(), func(ctx context.Context) error {
		n, err := s.runner.ResumeInterrupted(ctx)
		if n > 0 {
			s.log.Warn("agent: turns of a stopped server resumed", "count", n)
		}
		return err
	}); err != nil {
		return err
	}
	return r.Add("orphaned-runs", "@every 30s", func(ctx context.Context) error {
		n, err := s.db.SweepOrphanedChats(ctx, "interrupted: the server running this session stopped")
		if n > 0 {
			s.log.Warn("agent: sessions of a stopped server marked failed", "count", n)
		}
		return err
	})
}
