package knowledge

import (
	"context"

	"github.com/opsagent/opsagent/rag"
	"github.com/opsagent/opsagent/store"
)

// Source is the RAG store's Source on a shared (PostgreSQL) database: the
// documents are rows of knowledge_documents, written in the request's
// transaction (or the memory's), and every server's index follows their
// change feed (issue 20). The appliance keeps its documents as files.
func Source(db *store.DB) rag.Source { return dbSource{db} }

// Options are the RAG store's options for db: with a Source when the
// database is shared by several servers.
func Options(db *store.DB, o rag.Options) rag.Options {
	if db.Shared() {
		o.Source = Source(db)
	}
	return o
}

type dbSource struct{ db *store.DB }

func (s dbSource) Put(ctx context.Context, d *rag.SourceDoc) error {
	k := &store.KnowledgeDoc{OrgID: d.Scope.OrgID, ProjectID: d.Scope.ProjectID, Collection: d.Collection, Name: d.Name,
		Content: d.Content, Size: d.Size, SHA256: d.SHA256, Title: d.Title, Tags: d.Tags, CreateOnly: d.Create}
	if err := s.db.PutKnowledgeDoc(ctx, k); err != nil {
		if store.ErrorCode(err) == store.EConflict {
			return &rag.Error{Kind: rag.ErrExists, Field: "name", Detail: d.Name}
		}
		return err
	}
	d.Seq, d.ModTime = k.Seq, k.UpdatedAt
	return nil
}

func (s dbSource) Delete(ctx context.Context, scope rag.Scope, collection, name string) (*rag.SourceDoc, error) {
	k, err := s.db.DeleteKnowledgeDoc(ctx, scope.OrgID, scope.ProjectID, collection, name)
	if err != nil {
		return nil, notFound(err, name)
	}
	return sourceDoc(k), nil
}

func (s dbSource) Get(ctx context.Context, scope rag.Scope, collection, name string) (*rag.SourceDoc, error) {
	k, err := s.db.GetKnowledgeDoc(ctx, scope.OrgID, scope.ProjectID, collection, name)
	if err != nil {
		return nil, notFound(err, name)
	}
	return sourceDoc(k), nil
}

func (s dbSource) List(ctx context.Context, scope rag.Scope, collection string) ([]rag.SourceDoc, error) {
	ks, err := s.db.ListKnowledgeDocs(ctx, scope.OrgID, scope.ProjectID, collection)
	return sourceDocs(ks), err
}

func (s dbSource) Changes(ctx context.Context, after int64, limit int) ([]rag.SourceDoc, error) {
	ks, err := s.db.KnowledgeChanges(ctx, after, limit)
	return sourceDocs(ks), err
}

func (s dbSource) Usage(ctx context.Context, orgID string) (int64, map[string]int64, error) {
	return s.db.KnowledgeBytes(ctx, orgID)
}

func sourceDoc(k *store.KnowledgeDoc) *rag.SourceDoc {
	return &rag.SourceDoc{Scope: rag.Scope{OrgID: k.OrgID, ProjectID: k.ProjectID}, Collection: k.Collection, Name: k.Name,
		Content: k.Content, Size: k.Size, SHA256: k.SHA256, Title: k.Title, Tags: k.Tags, Deleted: k.Deleted, Erased: k.Erased, Pruned: k.Pruned,
		Seq: k.Seq, ModTime: k.UpdatedAt}
}

func sourceDocs(ks []store.KnowledgeDoc) []rag.SourceDoc {
	out := make([]rag.SourceDoc, len(ks))
	for i := range ks {
		out[i] = *sourceDoc(&ks[i])
	}
	return out
}

// notFound turns the store's not-found into the RAG store's.
func notFound(err error, name string) error {
	if store.IsNotFound(err) {
		return &rag.Error{Kind: rag.ErrNotFound, Field: "name", Detail: name}
	}
	return err
}
