package rag

import (
	"context"
	"fmt"
	"io/fs"
)

// DropOrg erases an organization from the store: its folder of documents (every project's, the org-wide
// ones and the memories) and every chunk the index holds of it. The server calls it after the transaction
// that deleted the organization committed (account erasure), and for organizations that no longer exist
// (a crash between the two). With a Source the documents are rows: the erasure reaches every server's index
// through the feed (apply); only this server's memory of the org's searches goes here.
func (s *Store) DropOrg(ctx context.Context, orgID string) error {
	if err := s.await(ctx); err != nil {
		return err
	}
	if err := validateScope(Scope{OrgID: orgID}); err != nil {
		return err
	}
	s.activity.forgetOrg(orgID) // this server's memory of its searches, on either kind of store
	if s.src != nil {
		return nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed.Load() {
		return ErrClosed
	}
	// Files first: a crash after this leaves index entries of files that are gone, which the Sync at the
	// next open drops; the other order would leave files that Sync indexes again.
	if err := s.docs.RemoveAll(orgID); err != nil {
		return fmt.Errorf("rag: remove the documents of %s: %w", orgID, err)
	}
	if err := syncDir(s.docs, "."); err != nil {
		return fmt.Errorf("rag: remove the documents of %s: %w", orgID, err)
	}
	// The cluster's erasure path: every manifest entry of the organization (and its chunks) leaves.
	return s.applyLocked([]SourceDoc{{Scope: Scope{OrgID: orgID}, Erased: true, Seq: 1}})
}

// Orgs lists the organizations that have a folder of documents, so a sweep can drop those the database no
// longer has: one directory listing. Index entries whose folder is gone need no sweep: Sync (at Open and
// every SyncInterval) drops the entries of missing files. With a Source it is nil (the feed erases). While
// the index loads in the background it fails with ErrLoading (after Options.LoadWait).
func (s *Store) Orgs(ctx context.Context) ([]string, error) {
	if err := s.await(ctx); err != nil {
		return nil, err
	}
	if s.src != nil {
		return nil, nil
	}
	if s.closed.Load() {
		return nil, ErrClosed
	}
	entries, err := fs.ReadDir(s.docs.FS(), ".")
	if err != nil {
		return nil, fmt.Errorf("rag: list the documents: %w", err)
	}
	var orgs []string
	for _, e := range entries {
		if e.IsDir() && idPattern.MatchString(e.Name()) {
			orgs = append(orgs, e.Name())
		}
	}
	return orgs, nil
}
