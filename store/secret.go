package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"
)

// Secret kinds. User-named secrets are "env" (injected into the agent's
// commands as environment variables); platform credentials get their own
// kind so a user's secret can never shadow them.
const (
	SecretKindEnv    = "env"
	SecretKindLLMKey = "llm_key"
)

// MaxSecretsPerScope caps how many secrets one org or project keeps.
const MaxSecretsPerScope = 500

// Secret is one vault-encrypted value. The store never sees plaintext: the
// caller encrypts inside the write transaction and stores the ciphertext.
// ProjectID "" means org-wide.
type Secret struct {
	ID          string
	OrgID       string
	ProjectID   string
	Kind        string
	Name        string
	Description string
	Meta        string // JSON object of non-secret fields
	Ciphertext  []byte // empty in listings
	KeyID       string
	CreatedBy   string
	UpdatedBy   string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	LastUsedAt  *time.Time
}

const secretMetaCols = `id, org_id, COALESCE(project_id, ''), kind, name, description, meta, key_id,
	COALESCE(created_by, ''), COALESCE(updated_by, ''), created_at, updated_at, last_used_at`

func scanSecret(row interface{ Scan(...any) error }, withCT bool) (*Secret, error) {
	var s Secret
	var created, updated string
	var used sql.NullString
	dst := []any{&s.ID, &s.OrgID, &s.ProjectID, &s.Kind, &s.Name, &s.Description, &s.Meta, &s.KeyID,
		&s.CreatedBy, &s.UpdatedBy, &created, &updated, &used}
	if withCT {
		dst = append(dst, &s.Ciphertext)
	}
	if err := row.Scan(dst...); err != nil {
		return nil, err
	}
	s.CreatedAt, s.UpdatedAt, s.LastUsedAt = ParseTS(created), ParseTS(updated), scanNullTS(used)
	return &s, nil
}

// projectArg maps "" (org-wide) to NULL.
func projectArg(projectID string) any {
	if projectID == "" {
		return nil
	}
	return projectID
}

// FindSecrets lists the secrets of one kind in exactly one scope (an org's
// own when projectID is ""), by name, without ciphertexts.
func (db *DB) FindSecrets(ctx context.Context, orgID, projectID, kind string) ([]Secret, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+secretMetaCols+` FROM secrets
		WHERE org_id = ? AND COALESCE(project_id, '') = ? AND kind = ? ORDER BY name`, orgID, projectID, kind)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Secret{}
	for rows.Next() {
		s, err := scanSecret(rows, false)
		if err != nil {
			return nil, err
		}
		out = append(out, *s)
	}
	return out, rows.Err()
}

// FindSecret reads one secret with its ciphertext, in exactly one scope.
func (db *DB) FindSecret(ctx context.Context, orgID, projectID, kind, name string) (*Secret, error) {
	s, err := scanSecret(db.r.QueryRowContext(ctx, `SELECT `+secretMetaCols+`, ciphertext FROM secrets
		WHERE org_id = ? AND COALESCE(project_id, '') = ? AND kind = ? AND name = ?`, orgID, projectID, kind, name), true)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("secret")
	}
	return s, err
}

// FindSecretsForProject returns, with ciphertexts, the secrets of one kind a
// project sees: its own and its org's, a project secret replacing an org
// secret of the same name. names limits the result when not empty.
func (db *DB) FindSecretsForProject(ctx context.Context, orgID, projectID, kind string, names []string) ([]Secret, error) {
	q := `SELECT ` + secretMetaCols + `, ciphertext FROM secrets
		WHERE org_id = ? AND kind = ? AND (project_id IS NULL OR project_id = ?)`
	args := []any{orgID, kind, projectID}
	if len(names) > 0 {
		q += ` AND name IN (?` + strings.Repeat(", ?", len(names)-1) + `)`
		for _, n := range names {
			args = append(args, n)
		}
	}
	// Org rows first, so the project's row of the same name overwrites them below.
	q += ` ORDER BY project_id IS NOT NULL, name`
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byName := map[string]int{}
	out := []Secret{}
	for rows.Next() {
		s, err := scanSecret(rows, true)
		if err != nil {
			return nil, err
		}
		if i, ok := byName[s.Name]; ok {
			out[i] = *s
			continue
		}
		byName[s.Name] = len(out)
		out = append(out, *s)
	}
	return out, rows.Err()
}

// PutSecret creates or replaces the secret (org, project, kind, name) with
// the ciphertext seal returns, and s's description and meta. seal runs
// inside the write transaction: a vault rotation's final pass (also a write
// transaction) either sees this row or ran before the key seal used was
// loaded. It fills s's id, times, ciphertext and key id and reports whether
// the row is new.
func (db *DB) PutSecret(ctx context.Context, s *Secret, seal func() (ct []byte, keyID string, err error)) (created bool, err error) {
	err = db.Write(ctx, func(tx *Tx) error {
		if s.Ciphertext, s.KeyID, err = seal(); err != nil {
			return err
		}
		created, err = putSecretTx(ctx, tx, s)
		return err
	})
	return created, err
}

func putSecretTx(ctx context.Context, tx *Tx, s *Secret) (created bool, err error) {
	if s.Meta == "" {
		s.Meta = "{}"
	}
	var id, createdAt string
	var createdBy sql.NullString
	err = tx.QueryRowContext(ctx, `SELECT id, created_at, created_by FROM secrets
		WHERE org_id = ? AND COALESCE(project_id, '') = ? AND kind = ? AND name = ?`,
		s.OrgID, s.ProjectID, s.Kind, s.Name).Scan(&id, &createdAt, &createdBy)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM secrets WHERE org_id = ? AND COALESCE(project_id, '') = ?`,
			s.OrgID, s.ProjectID).Scan(&n); err != nil {
			return false, err
		}
		if n >= MaxSecretsPerScope {
			return false, &Error{Code: EConflict, Message: "too many secrets in this scope", Reason: "secret_limit"}
		}
		now := ParseTS(TS(tx.Now)) // what a later read returns
		s.ID, s.CreatedAt, s.UpdatedAt = NewID(), now, now
		s.UpdatedBy = s.CreatedBy
		_, err = tx.ExecContext(ctx, `INSERT INTO secrets (id, org_id, project_id, kind, name, description, meta,
			ciphertext, key_id, created_by, updated_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			s.ID, s.OrgID, projectArg(s.ProjectID), s.Kind, s.Name, s.Description, s.Meta, s.Ciphertext, s.KeyID,
			nullStr(s.CreatedBy), nullStr(s.CreatedBy), TS(tx.Now), TS(tx.Now))
		return true, err
	case err != nil:
		return false, err
	}
	s.ID, s.CreatedAt, s.UpdatedAt, s.CreatedBy = id, ParseTS(createdAt), ParseTS(TS(tx.Now)), createdBy.String
	_, err = tx.ExecContext(ctx, `UPDATE secrets SET description = ?, meta = ?, ciphertext = ?, key_id = ?,
		updated_by = ?, updated_at = ? WHERE id = ?`,
		s.Description, s.Meta, s.Ciphertext, s.KeyID, nullStr(s.UpdatedBy), TS(tx.Now), id)
	return false, err
}

// DeleteSecret removes one secret of exactly one scope.
func (db *DB) DeleteSecret(ctx context.Context, orgID, projectID, kind, name string) error {
	return db.Write(ctx, func(tx *Tx) error {
		return execOne(ctx, tx, "secret", `DELETE FROM secrets
			WHERE org_id = ? AND COALESCE(project_id, '') = ? AND kind = ? AND name = ?`, orgID, projectID, kind, name)
	})
}

// TouchSecrets stamps last_used_at on the given secrets.
func (db *DB) TouchSecrets(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	return db.Write(ctx, func(tx *Tx) error {
		args := []any{TS(tx.Now)}
		for _, id := range ids {
			args = append(args, id)
		}
		_, err := tx.ExecContext(ctx, `UPDATE secrets SET last_used_at = ? WHERE id IN (?`+strings.Repeat(", ?", len(ids)-1)+`)`, args...)
		return err
	})
}
