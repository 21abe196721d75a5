package store

import "context"

// KnowledgeQuota checks a document write against the organization's storage
// quota, inside the transaction that writes it: used is the size of the
// org's live documents, replaced the size of the live document the write
// replaces (0 for a new one), add the new document's size. An error (a
// *QuotaError) refuses the write.
type KnowledgeQuota func(ctx context.Context, tx *Tx, used, replaced, add int64) error

type quotaKey struct{}

// WithKnowledgeQuota returns ctx carrying q: PutKnowledgeDoc checks it in
// the transaction that writes the document, after reading the org's usage
// there. This is what makes the knowledge quota exact on a PostgreSQL
// cluster, where two servers write documents at once (issue 20); the
// appliance's documents are files, checked under the server's own lock.
func WithKnowledgeQuota(ctx context.Context, q KnowledgeQuota) context.Context {
	if q == nil {
		return ctx
	}
	return context.WithValue(ctx, quotaKey{}, q)
}

func knowledgeQuotaOf(ctx context.Context) KnowledgeQuota {
	q, _ := ctx.Value(quotaKey{}).(KnowledgeQuota)
	return q
}

// knowledgeQuotaLock names the per-organization lock quota-checked writes hold.
func knowledgeQuotaLock(orgID string) string { return "opsagent:knowledge-quota:" + orgID }

// lockKnowledgeQuota takes the org's quota lock for a checked write that
// opens its own transaction, before it begins; it returns the release, to
// call after the commit.
//
// The check is exact without it: the usage is read and the row written in
// one SERIALIZABLE transaction, so of two racing uploads PostgreSQL lets
// only one commit as if it ran alone. But a transaction's snapshot is taken
// at its first statement, so a lock taken inside it would leave the waiter
// with a snapshot from before the other's commit, certain to fail
// serialization and be retried. Taken before BEGIN, the second upload's
// transaction starts after the first committed, reads its row, and is
// refused with the quota's 402 at once.
func (db *DB) lockKnowledgeQuota(ctx context.Context, orgID string) (func(), error) {
	if _, inTx := ctx.Value(txKey{}).(*Tx); inTx || !db.pg {
		return func() {}, nil
	}
	return db.AdvisoryLock(ctx, knowledgeQuotaLock(orgID))
}

// checkKnowledgeQuotaTx reads the org's usage in tx and runs q on it.
func checkKnowledgeQuotaTx(ctx context.Context, tx *Tx, q KnowledgeQuota, d *KnowledgeDoc) error {
	var used, replaced int64
	err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(size), 0),
		COALESCE(SUM(CASE WHEN project_id = ? AND collection = ? AND name = ? THEN size ELSE 0 END), 0)
		FROM knowledge_documents WHERE org_id = ? AND deleted = 0`, d.ProjectID, d.Collection, d.Name, d.OrgID).Scan(&used, &replaced)
	if err != nil {
		return err
	}
	return q(ctx, tx, used, replaced, d.Size)
}
