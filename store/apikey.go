package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"
)

// APIKey is a machine credential of one org. Only SecretHash is stored; the
// secret itself is shown once at creation.
type APIKey struct {
	ID           string
	OrgID        string
	CreatedBy    string
	CreatorEmail string
	Name         string
	Prefix       string
	SecretHash   []byte
	Scopes       []string
	Projects     []string
	ExpiresAt    *time.Time
	LastUsedAt   *time.Time
	LastIP       string
	RevokedAt    *time.Time
	CreatedAt    time.Time
}

const apiKeyCols = `k.id, k.org_id, k.created_by, COALESCE(u.email, ''), k.name, k.prefix, k.secret_hash, k.scopes, k.projects,
	k.expires_at, k.last_used_at, k.last_ip, k.revoked_at, k.created_at`

func scanAPIKey(row interface{ Scan(...any) error }) (*APIKey, error) {
	var k APIKey
	var scopes, projects, created string
	var expires, used, revoked sql.NullString
	err := row.Scan(&k.ID, &k.OrgID, &k.CreatedBy, &k.CreatorEmail, &k.Name, &k.Prefix, &k.SecretHash, &scopes, &projects,
		&expires, &used, &k.LastIP, &revoked, &created)
	if err != nil {
		return nil, err
	}
	_ = json.Unmarshal([]byte(scopes), &k.Scopes)
	_ = json.Unmarshal([]byte(projects), &k.Projects)
	if k.Projects == nil {
		k.Projects = []string{}
	}
	k.ExpiresAt, k.LastUsedAt, k.RevokedAt = scanNullTS(expires), scanNullTS(used), scanNullTS(revoked)
	k.CreatedAt = ParseTS(created)
	return &k, nil
}

// CreateAPIKey stores k (ID, OrgID, CreatedBy, Name, Prefix, SecretHash,
// Scopes, Projects, ExpiresAt set by the caller). Every project of the
// allow-list must belong to the org, or the whole key is refused.
func (db *DB) CreateAPIKey(ctx context.Context, k *APIKey) error {
	return db.Write(ctx, func(tx *Tx) error {
		for _, p := range k.Projects {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM projects WHERE id = ? AND org_id = ?`, p, k.OrgID).Scan(&n); err != nil {
				return err
			}
			if n == 0 {
				return NotFound("project")
			}
		}
		k.CreatedAt = tx.Now
		scopes, _ := json.Marshal(k.Scopes)
		projects, _ := json.Marshal(k.Projects)
		_, err := tx.ExecContext(ctx, `INSERT INTO api_keys (id, org_id, created_by, name, prefix, secret_hash, scopes, projects, expires_at, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, k.ID, k.OrgID, k.CreatedBy, k.Name, k.Prefix, k.SecretHash, string(scopes), string(projects),
			nullTS(k.ExpiresAt), TS(tx.Now))
		return err
	})
}

// FindAPIKeys lists the keys of an org, newest first; createdBy narrows to one creator.
func (db *DB) FindAPIKeys(ctx context.Context, orgID, createdBy string) ([]*APIKey, error) {
	q := `SELECT ` + apiKeyCols + ` FROM api_keys k LEFT JOIN users u ON u.id = k.created_by WHERE k.org_id = ?`
	args := []any{orgID}
	if createdBy != "" {
		q += ` AND k.created_by = ?`
		args = append(args, createdBy)
	}
	rows, err := db.r.QueryContext(ctx, q+` ORDER BY k.created_at DESC, k.id DESC`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out, err := collectPtrs(rows, scanAPIKey)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// FindAPIKey returns one key of orgID.
func (db *DB) FindAPIKey(ctx context.Context, orgID, id string) (*APIKey, error) {
	k, err := scanAPIKey(db.r.QueryRowContext(ctx, `SELECT `+apiKeyCols+` FROM api_keys k LEFT JOIN users u ON u.id = k.created_by WHERE k.org_id = ? AND k.id = ?`, orgID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("API key")
	}
	return k, err
}

// RevokeAPIKey revokes a key of orgID (idempotent for an already revoked key).
func (db *DB) RevokeAPIKey(ctx context.Context, orgID, id string) error {
	return db.Write(ctx, func(tx *Tx) error {
		return execOne(ctx, tx, "API key", `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE org_id = ? AND id = ?`, TS(tx.Now), orgID, id)
	})
}

// KeyPrincipal is a key with what request-time authorization needs about its
// creator: their revocation epoch and their current role in the key's org
// ("" when they left or were removed).
type KeyPrincipal struct {
	Key              *APIKey
	CreatorEmail     string
	CreatorDeleted   bool
	TokensValidAfter time.Time
	Role             string
}

// FindKeyPrincipal looks a key up by its public prefix.
func (db *DB) FindKeyPrincipal(ctx context.Context, prefix string) (*KeyPrincipal, error) {
	row := db.r.QueryRowContext(ctx, `SELECT `+apiKeyCols+`, u.deleted_at IS NOT NULL, u.tokens_valid_after, COALESCE(m.role, '')
		FROM api_keys k JOIN users u ON u.id = k.created_by
		LEFT JOIN org_members m ON m.org_id = k.org_id AND m.user_id = k.created_by
		WHERE k.prefix = ?`, prefix)
	var k APIKey
	var p KeyPrincipal
	var scopes, projects, created, valid string
	var expires, used, revoked sql.NullString
	err := row.Scan(&k.ID, &k.OrgID, &k.CreatedBy, &k.CreatorEmail, &k.Name, &k.Prefix, &k.SecretHash, &scopes, &projects,
		&expires, &used, &k.LastIP, &revoked, &created, &p.CreatorDeleted, &valid, &p.Role)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("API key")
	}
	if err != nil {
		return nil, err
	}
	_ = json.Unmarshal([]byte(scopes), &k.Scopes)
	_ = json.Unmarshal([]byte(projects), &k.Projects)
	k.ExpiresAt, k.LastUsedAt, k.RevokedAt = scanNullTS(expires), scanNullTS(used), scanNullTS(revoked)
	k.CreatedAt = ParseTS(created)
	p.Key, p.CreatorEmail, p.TokensValidAfter = &k, k.CreatorEmail, ParseTS(valid)
	return &p, nil
}

// TouchAPIKey records a use of the key from ip and reports whether the key
// had never been used from that address before.
func (db *DB) TouchAPIKey(ctx context.Context, keyID, ip string) (newIP bool, err error) {
	err = db.Write(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO api_key_ips (key_id, ip, first_seen_at) VALUES (?, ?, ?)`, keyID, ip, TS(tx.Now))
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		newIP = n > 0
		_, err = tx.ExecContext(ctx, `UPDATE api_keys SET last_used_at = ?, last_ip = ? WHERE id = ?`, TS(tx.Now), ip, keyID)
		return err
	})
	return newIP, err
}
