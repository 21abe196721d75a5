package server

import (
	"context"
	"errors"
	"os"

	"github.com/opsagent/opsagent/rag"
	"github.com/opsagent/opsagent/store"
)

// eraseOrgFiles removes what a deleted organization left under the data
// directory: its knowledge (documents and memories: files and index
// entries) and its archived audit segments, whose rows went with the
// organization. Called after the erasure's transaction committed; what a
// crash leaves in between, sweepErasedOrgFiles removes.
func (s *Server) eraseOrgFiles(ctx context.Context, orgID string) error {
	if !store.ValidID(orgID) {
		return nil // never a path outside the data dir's folders
	}
	if err := s.rag.DropOrg(ctx, orgID); err != nil {
		return err
	}
	return os.RemoveAll(s.cfg.Path("audit-archive", orgID))
}

// sweepErasedOrgFiles removes the files of organizations the database no
// longer has (a crash between an erasure's commit and eraseOrgFiles). One
// listing of what is on disk, then one query of the org ids: an org whose
// files were listed existed before them, so missing from the query means
// deleted, never "created since".
func (s *Server) sweepErasedOrgFiles(ctx context.Context) error {
	held, err := s.rag.Orgs(ctx)
	if errors.Is(err, rag.ErrLoading) {
		held = nil // the index is still opening: the next run sweeps it
	} else if err != nil {
		return err
	}
	archives, err := os.ReadDir(s.cfg.Path("audit-archive"))
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	onDisk := map[string]bool{}
	for _, id := range held {
		onDisk[id] = true
	}
	for _, e := range archives {
		if e.IsDir() {
			onDisk[e.Name()] = true
		}
	}
	if len(onDisk) == 0 {
		return nil
	}
	ids, err := s.db.OrgIDs(ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		delete(onDisk, id)
	}
	for id := range onDisk {
		if err := s.eraseOrgFiles(ctx, id); err != nil {
			return err
		}
		s.log.Info("erasure: removed the files of an organization that no longer exists", "org_id", id)
	}
	return nil
}

// sweepAtStart runs the sweep once the knowledge index is open, so files
// left by a crash during an erasure go at start, not at the job's first run.
func (s *Server) sweepAtStart(ctx context.Context) {
	select {
	case <-s.rag.Loaded():
	case <-ctx.Done():
		return
	}
	if err := s.sweepErasedOrgFiles(ctx); err != nil && ctx.Err() == nil {
		s.log.Warn("erasure: the sweep of erased organizations' files failed", "err", err)
	}
}
