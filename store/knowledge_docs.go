package store

import (
	"context"
	"database/sql"
	"strings"
	"time"
)

// KnowledgeDoc is a knowledge document as the database holds it (issue 20):
// on PostgreSQL the documents of every server's RAG store live here, and the
// rows ordered by Seq are the change feed each server's index follows. A
// deletion leaves a tombstone (Deleted, no content) with a new Seq, so a
// follower learns of it like of any other change.
type KnowledgeDoc struct {
	OrgID      string
	ProjectID  string // "" for the organization's documents
	Collection string
	Name       string
	Content    []byte // nil when listed
	Size       int64
	SHA256     string
	Title      string
	Tags       []string
	Deleted    bool
	// Erased (the change feed only): the organization OrgID was erased, and every document of it with
	// it; the other fields but Seq and UpdatedAt are empty.
	Erased bool
	// Pruned (the change feed only): tombstones or erasures up to Seq were pruned; a reader positioned
	// below it rebuilds from the documents.
	Pruned    bool
	Seq       int64
	UpdatedAt time.Time
	// CreateOnly (PutKnowledgeDoc): a live document of that name is a conflict, not replaced.
	CreateOnly bool
}

type txKey struct{}

// WithTx returns ctx carrying tx: the knowledge writes made with it join that
// transaction (a memory and its document are saved together) instead of
// opening their own, which would wait forever for the one writer connection.
func WithTx(ctx context.Context, tx *Tx) context.Context { return context.WithValue(ctx, txKey{}, tx) }

// writeIn runs fn in the transaction ctx carries, or in a transaction of its own.
func (db *DB) writeIn(ctx context.Context, fn func(tx *Tx) error) error {
	if tx, ok := ctx.Value(txKey{}).(*Tx); ok && tx != nil && tx.db == db {
		return fn(tx)
	}
	return db.Write(ctx, fn)
}

const knowledgeCols = `org_id, project_id, collection, name, size, sha256, title, tags, deleted, seq, updated_at`

// PutKnowledgeDoc creates or replaces a document (reviving a tombstone) with a
// new change number; it fills d.Seq and d.UpdatedAt. With d.CreateOnly a live
// document of that name is a conflict (EConflict, nothing written). When ctx
// carries a KnowledgeQuota (WithKnowledgeQuota), the write is checked
// against it in its own transaction.
func (db *DB) PutKnowledgeDoc(ctx context.Context, d *KnowledgeDoc) error {
	q := knowledgeQuotaOf(ctx)
	if q != nil {
		unlock, err := db.lockKnowledgeQuota(ctx, d.OrgID)
		if err != nil {
			return err
		}
		defer unlock()
	}
	return db.writeIn(ctx, func(tx *Tx) error {
		if q != nil {
			if err := checkKnowledgeQuotaTx(ctx, tx, q, d); err != nil {
				return err
			}
		}
		seq, err := nextKnowledgeSeq(ctx, tx)
		if err != nil {
			return err
		}
		d.Seq, d.UpdatedAt, d.Deleted = seq, tx.Now, false
		if d.Content == nil {
			d.Content = []byte{}
		}
		onlyDeleted := 0
		if d.CreateOnly {
			onlyDeleted = 1
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO knowledge_documents (org_id, project_id, collection, name, content, size, sha256, title, tags, deleted, seq, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)
			ON CONFLICT (org_id, project_id, collection, name) DO UPDATE SET content = excluded.content, size = excluded.size,
				sha256 = excluded.sha256, title = excluded.title, tags = excluded.tags, deleted = 0, seq = excluded.seq, updated_at = excluded.updated_at
			WHERE knowledge_documents.deleted = 1 OR ? = 0`,
			d.OrgID, d.ProjectID, d.Collection, d.Name, d.Content, d.Size, d.SHA256, d.Title, strings.Join(d.Tags, ","), seq, TS(tx.Now), onlyDeleted)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return &Error{Code: EConflict, Message: "a document with this name exists", Reason: "document_exists"}
		}
		return nil
	})
}

// DeleteKnowledgeDoc turns a live document of exactly this scope into a
// tombstone with a new change number and returns the tombstone; NotFound
// when there is no such document.
func (db *DB) DeleteKnowledgeDoc(ctx context.Context, orgID, projectID, collection, name string) (*KnowledgeDoc, error) {
	var d *KnowledgeDoc
	err := db.writeIn(ctx, func(tx *Tx) error {
		var n int
		err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM knowledge_documents WHERE org_id = ? AND project_id = ? AND collection = ? AND name = ? AND deleted = 0`,
			orgID, projectID, collection, name).Scan(&n)
		if err != nil {
			return err
		}
		if n == 0 {
			return NotFound("document")
		}
		seq, err := nextKnowledgeSeq(ctx, tx)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE knowledge_documents SET content = ?, size = 0, sha256 = '', title = '', tags = '', deleted = 1, seq = ?, updated_at = ?
			WHERE org_id = ? AND project_id = ? AND collection = ? AND name = ?`, []byte{}, seq, TS(tx.Now), orgID, projectID, collection, name)
		d = &KnowledgeDoc{OrgID: orgID, ProjectID: projectID, Collection: collection, Name: name, Deleted: true, Seq: seq, UpdatedAt: tx.Now}
		return err
	})
	return d, err
}

// GetKnowledgeDoc reads a live document of exactly this scope, with its content.
func (db *DB) GetKnowledgeDoc(ctx context.Context, orgID, projectID, collection, name string) (*KnowledgeDoc, error) {
	row := db.r.QueryRowContext(ctx, `SELECT `+knowledgeCols+`, content FROM knowledge_documents
		WHERE org_id = ? AND project_id = ? AND collection = ? AND name = ? AND deleted = 0`, orgID, projectID, collection, name)
	d, err := scanKnowledgeDoc(row, true)
	if err == sql.ErrNoRows {
		return nil, NotFound("document")
	}
	return d, err
}

// ListKnowledgeDocs lists the live documents of one collection of exactly
// this scope, by name, without their content.
func (db *DB) ListKnowledgeDocs(ctx context.Context, orgID, projectID, collection string) ([]KnowledgeDoc, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+knowledgeCols+` FROM knowledge_documents
		WHERE org_id = ? AND project_id = ? AND collection = ? AND deleted = 0 ORDER BY name`, orgID, projectID, collection)
	if err != nil {
		return nil, err
	}
	return scanKnowledgeDocs(rows, false)
}

// KnowledgeBytes is the size of an organization's live documents: the total
// and per project ("" for its org-wide documents).
func (db *DB) KnowledgeBytes(ctx context.Context, orgID string) (int64, map[string]int64, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT project_id, COALESCE(SUM(size), 0) FROM knowledge_documents
		WHERE org_id = ? AND deleted = 0 GROUP BY project_id`, orgID)
	if err != nil {
		return 0, nil, err
	}
	defer rows.Close()
	var total int64
	by := map[string]int64{}
	for rows.Next() {
		var p string
		var n int64
		if err := rows.Scan(&p, &n); err != nil {
			return 0, nil, err
		}
		by[p] = n
		total += n
	}
	return total, by, rows.Err()
}

func scanKnowledgeDoc(r rowScanner, withContent bool) (*KnowledgeDoc, error) {
	var d KnowledgeDoc
	var tags, updated string
	var deleted int64
	dest := []any{&d.OrgID, &d.ProjectID, &d.Collection, &d.Name, &d.Size, &d.SHA256, &d.Title, &tags, &deleted, &d.Seq, &updated}
	if withContent {
		dest = append(dest, &d.Content)
	}
	if err := r.Scan(dest...); err != nil {
		return nil, err
	}
	if tags != "" {
		d.Tags = strings.Split(tags, ",")
	}
	d.Deleted = deleted != 0
	d.Erased = deleted == erasedMark
	d.Pruned = deleted == prunedMark
	d.UpdatedAt = ParseTS(updated)
	return &d, nil
}

func scanKnowledgeDocs(rows *sql.Rows, withContent bool) ([]KnowledgeDoc, error) {
	defer rows.Close()
	var out []KnowledgeDoc
	for rows.Next() {
		d, err := scanKnowledgeDoc(rows, withContent)
		if err != nil {
			return nil, err
		}
		out = append(out, *d)
	}
	return out, rows.Err()
}
