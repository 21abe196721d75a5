package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Preference is one per-user setting; Value is JSON text.
type Preference struct {
	Key       string
	Value     string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// MaxPreferences caps how many keys one user may keep.
const MaxPreferences = 200

// FindPreferences lists a user's preferences by key.
func (db *DB) FindPreferences(ctx context.Context, userID string) ([]Preference, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT key, value, created_at, updated_at FROM preferences WHERE user_id = ? ORDER BY key`, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Preference{}
	for rows.Next() {
		var p Preference
		var c, u string
		if err := rows.Scan(&p.Key, &p.Value, &c, &u); err != nil {
			return nil, err
		}
		p.CreatedAt, p.UpdatedAt = ParseTS(c), ParseTS(u)
		out = append(out, p)
	}
	return out, rows.Err()
}

// FindPreference reads one preference.
func (db *DB) FindPreference(ctx context.Context, userID, key string) (*Preference, error) {
	p := Preference{Key: key}
	var c, u string
	err := db.r.QueryRowContext(ctx, `SELECT value, created_at, updated_at FROM preferences WHERE user_id = ? AND key = ?`, userID, key).Scan(&p.Value, &c, &u)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("preference")
	}
	p.CreatedAt, p.UpdatedAt = ParseTS(c), ParseTS(u)
	return &p, err
}

// PutPreference creates or replaces a preference.
func (db *DB) PutPreference(ctx context.Context, userID, key, value string) (*Preference, error) {
	var out *Preference
	err := db.Write(ctx, func(tx *Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM preferences WHERE user_id = ? AND key != ?`, userID, key).Scan(&n); err != nil {
			return err
		}
		if n >= MaxPreferences {
			return Errorf(EConflict, "too many preferences (at most %d)", MaxPreferences)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO preferences (user_id, key, value, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (user_id, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`, userID, key, value, TS(tx.Now), TS(tx.Now))
		if err != nil {
			return err
		}
		var c, u string
		p := Preference{Key: key}
		err = tx.QueryRowContext(ctx, `SELECT value, created_at, updated_at FROM preferences WHERE user_id = ? AND key = ?`, userID, key).Scan(&p.Value, &c, &u)
		p.CreatedAt, p.UpdatedAt = ParseTS(c), ParseTS(u)
		out = &p
		return err
	})
	return out, err
}

// DeletePreference removes a preference; a missing key is not found.
func (db *DB) DeletePreference(ctx context.Context, userID, key string) error {
	return db.Write(ctx, func(tx *Tx) error {
		return execOne(ctx, tx, "preference", `DELETE FROM preferences WHERE user_id = ? AND key = ?`, userID, key)
	})
}
