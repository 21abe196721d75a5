package server

import (
	"context"
	"os"
	"time"

	"github.com/opsagent/opsagent/store"
)

// WorkDirIdle is how long a project's agent must be idle (no session
// running, waiting for approval or active) before the cleanup job wipes
// its work directory, so files commands left there (a secret written to
// disk among them) do not pile up.
const WorkDirIdle = time.Hour

// sweepWorkDirs wipes the work directories of idle projects (and of
// projects that no longer exist).
func (s *Server) sweepWorkDirs(ctx context.Context) error {
	entries, err := os.ReadDir(s.cfg.Path("work"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	since := s.Now().Add(-WorkDirIdle)
	for _, e := range entries {
		if !e.IsDir() || !store.ValidID(e.Name()) {
			continue
		}
		busy, err := s.db.ProjectAgentBusy(ctx, e.Name(), since)
		if err != nil {
			return err
		}
		if busy {
			continue
		}
		if err := os.RemoveAll(s.cfg.Path("work", e.Name())); err != nil {
			s.log.Warn("cleanup: work directory not wiped", "project_id", e.Name(), "err", err)
		}
	}
	return nil
}
