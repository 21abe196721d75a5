package store

import "context"

// MemoryHook runs inside a memory write's transaction with the row as
// written: the knowledge base indexes the memory's document there, so a
// memory the index refuses (or a hook's validation error) is not saved either.
// Its ctx carries the transaction (WithTx): on PostgreSQL the document is a
// row written in it.
type MemoryHook func(ctx context.Context, m *Memory) error

// SaveMemory creates m, or updates the memory of the same scope and key
// (title, text, tags, source session); it fills m from the stored row, runs
// then, and reports whether the memory is new.
func (db *DB) SaveMemory(ctx context.Context, m *Memory, then MemoryHook) (created bool, err error) {
	err = db.Write(ctx, func(tx *Tx) error {
		var err error
		if created, err = saveMemoryTx(ctx, tx, m); err != nil {
			return err
		}
		return then(WithTx(ctx, tx), m)
	})
	return created, err
}

// UpdateMemory applies patch to a memory the project sees, runs then with
// the result and returns it.
func (db *DB) UpdateMemory(ctx context.Context, orgID, projectID, id string, p MemoryPatch, then MemoryHook) (*Memory, error) {
	var m *Memory
	err := db.Write(ctx, func(tx *Tx) error {
		var err error
		if m, err = updateMemoryTx(ctx, tx, orgID, projectID, id, p); err != nil {
			return err
		}
		return then(WithTx(ctx, tx), m)
	})
	return m, err
}

// DeleteMemory removes a memory the project sees and runs then with what it was.
func (db *DB) DeleteMemory(ctx context.Context, orgID, projectID, id string, then MemoryHook) error {
	return db.Write(ctx, func(tx *Tx) error {
		m, err := deleteMemoryTx(ctx, tx, orgID, projectID, id)
		if err != nil {
			return err
		}
		return then(WithTx(ctx, tx), m)
	})
}

// RefreshMemory re-reads memory id in a write transaction and runs then with
// it, so the hook cannot undo a concurrent write; a memory deleted meanwhile
// is left alone (then does not run).
func (db *DB) RefreshMemory(ctx context.Context, id string, then MemoryHook) error {
	return db.Write(ctx, func(tx *Tx) error {
		m, err := findMemoryTx(ctx, tx, id)
		if IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return then(WithTx(ctx, tx), m)
	})
}

// IfMemoryGone runs then, in a write transaction, only when no memory row
// has this id (so a concurrent save cannot slip between the check and then).
func (db *DB) IfMemoryGone(ctx context.Context, id string, then func(ctx context.Context) error) error {
	return db.Write(ctx, func(tx *Tx) error {
		if ok, err := memoryExistsTx(ctx, tx, id); ok || err != nil {
			return err
		}
		return then(WithTx(ctx, tx))
	})
}
