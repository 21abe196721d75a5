package rag

import (
	"context"
	"path"
	"time"
)

// Source holds the documents when they are not files: on a PostgreSQL cluster the database is their source
// of truth, shared by every server, and each server's index is a cache of it (issue 20). Every write gets a
// new, higher change number (Seq); a deletion leaves a tombstone with one, so a follower that reads the
// documents whose Seq is above the last it applied learns of every change. Changes must return them in Seq
// order and never later commit a lower Seq than one it returned.
//
// With a Source, Put, Get, List and Delete go to it (Put and Delete then apply the change to this server's
// index at once, so what a server wrote it finds at once), Search reads the local index, and a follower
// (Start, every Options.FollowInterval) applies the other servers' changes. Open rebuilds the index from
// the whole feed, re-indexing only documents whose content the index does not hold.
type Source interface {
	// Put creates or replaces the document (reviving a tombstone) and fills d.Seq and d.ModTime; with
	// d.Create it fails with an error matching ErrExists, writing nothing, when a live one exists. When ctx
	// carries a transaction of the caller's, the write joins it.
	Put(ctx context.Context, d *SourceDoc) error
	// Delete leaves a tombstone of a live document of exactly this scope and returns it; an error matching
	// ErrNotFound when there is none.
	Delete(ctx context.Context, scope Scope, collection, name string) (*SourceDoc, error)
	// Get reads a live document of exactly this scope with its content; ErrNotFound when there is none.
	Get(ctx context.Context, scope Scope, collection, name string) (*SourceDoc, error)
	// List lists the live documents of one collection of exactly this scope by name, without content.
	List(ctx context.Context, scope Scope, collection string) ([]SourceDoc, error)
	// Changes returns the documents and tombstones of every tenant with Seq above after, and the erasures
	// of organizations (Erased), in Seq order, with their content, at most limit. When tombstones or
	// erasures above after were removed from the feed, it also returns a Pruned change whose Seq is the
	// highest removed: the caller may have missed a deletion, and rebuilds.
	Changes(ctx context.Context, after int64, limit int) ([]SourceDoc, error)
	// Usage is the size of an organization's live documents: the total and per project ("" for org-wide).
	Usage(ctx context.Context, orgID string) (total int64, byProject map[string]int64, err error)
}

// SourceDoc is a document, or the tombstone of one, as a Source holds it.
type SourceDoc struct {
	Scope      Scope
	Collection string
	Name       string
	Content    []byte
	Size       int64
	SHA256     string
	Title      string
	Tags       []string
	Deleted    bool
	// Erased (Changes only): the organization Scope.OrgID is gone, and every document of it; only Seq and
	// ModTime are set besides.
	Erased bool
	// Pruned (Changes only): the feed's deletions up to Seq were removed; nothing else is set.
	Pruned  bool
	Create  bool // Put only: refuse to replace a live document
	Seq     int64
	ModTime time.Time
}

func (d *SourceDoc) path() string { return path.Join(d.Scope.folder(), d.Collection, d.Name) }

func (d *SourceDoc) doc() Doc {
	return Doc{Scope: d.Scope, Collection: d.Collection, Name: d.Name, Title: d.Title, Tags: d.Tags,
		Size: d.Size, ModTime: d.ModTime.UTC(), SHA256: d.SHA256, Content: d.Content}
}

// putShared is Put with a Source: the content is valid and m its front matter.
func (s *Store) putShared(ctx context.Context, scope Scope, collection, name string, content []byte, m meta, create bool) (Doc, error) {
	_, body, _ := splitFrontMatter(content)
	title, _ := s.chunker.split(name, m.Title, string(body))
	d := &SourceDoc{Scope: scope, Collection: collection, Name: name, Content: content, Size: int64(len(content)),
		SHA256: hashHex(content), Title: title, Tags: m.Tags, Create: create}
	if d.Tags == nil {
		d.Tags = []string{}
	}
	if err := s.src.Put(ctx, d); err != nil {
		return Doc{}, err
	}
	if err := s.apply([]SourceDoc{*d}); err != nil {
		return Doc{}, err
	}
	return d.doc(), nil
}

func (s *Store) getShared(ctx context.Context, scope Scope, collection, name string) (Doc, error) {
	d, err := s.src.Get(ctx, scope, collection, name)
	if err != nil {
		return Doc{}, err
	}
	return d.doc(), nil
}

func (s *Store) listShared(ctx context.Context, scope Scope, collection string) ([]Doc, error) {
	ds, err := s.src.List(ctx, scope, collection)
	if err != nil {
		return nil, err
	}
	docs := make([]Doc, 0, len(ds))
	for i := range ds {
		docs = append(docs, ds[i].doc())
	}
	return docs, nil
}

func (s *Store) deleteShared(ctx context.Context, scope Scope, collection, name string) error {
	d, err := s.src.Delete(ctx, scope, collection, name)
	if err != nil {
		return err
	}
	return s.apply([]SourceDoc{*d})
}
