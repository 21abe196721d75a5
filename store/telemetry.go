package store

import "context"

// ClientError is a scrubbed browser error report.
type ClientError struct {
	Path, Message, Stack, UserAgent string
}

// CreateClientError stores a scrubbed report.
func (db *DB) CreateClientError(ctx context.Context, e ClientError) error {
	return db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO client_errors (id, path, message, stack, user_agent, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
			NewID(), e.Path, e.Message, e.Stack, e.UserAgent, TS(tx.Now))
		return err
	})
}

// CreateClientEvent stores a console telemetry event with label-reduced props (JSON).
func (db *DB) CreateClientEvent(ctx context.Context, event, props, userID string) error {
	return db.Write(ctx, func(tx *Tx) error {
		var uid any
		if userID != "" {
			uid = userID
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO client_events (id, event, props, user_id, created_at) VALUES (?, ?, ?, ?, ?)`,
			NewID(), event, props, uid, TS(tx.Now))
		return err
	})
}
