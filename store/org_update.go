package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
)

// OrgPatch changes an org; nil means keep. Branding and Settings keys are
// merged into the stored JSON objects (a nil value removes a key).
type OrgPatch struct {
	Name     *string
	Branding map[string]any
	Settings map[string]any
}

// UpdateOrg applies patch to orgID and returns the new row.
func (db *DB) UpdateOrg(ctx context.Context, orgID string, patch OrgPatch) (*Organization, error) {
	var out *Organization
	err := db.Write(ctx, func(tx *Tx) error {
		o, err := scanOrg(tx.QueryRowContext(ctx, `SELECT `+orgCols+` FROM organizations WHERE id = ?`, orgID))
		if errors.Is(err, sql.ErrNoRows) {
			return NotFound("organization")
		}
		if err != nil {
			return err
		}
		if patch.Name != nil {
			o.Name = *patch.Name
		}
		o.Branding = mergeJSON(o.Branding, patch.Branding)
		o.Settings = mergeJSON(o.Settings, patch.Settings)
		o.UpdatedAt = tx.Now
		_, err = tx.ExecContext(ctx, `UPDATE organizations SET name = ?, branding = ?, settings = ?, updated_at = ? WHERE id = ?`,
			o.Name, o.Branding, o.Settings, TS(tx.Now), orgID)
		out = o
		return err
	})
	return out, err
}

// CreateOrg creates an org owned by ownerID.
func (db *DB) CreateOrg(ctx context.Context, o *Organization, ownerID string) error {
	return db.Write(ctx, func(tx *Tx) error { return createOrgTx(ctx, tx, o, ownerID) })
}

// renameOrgTx renames an org inside a caller's transaction.
func renameOrgTx(ctx context.Context, tx *Tx, orgID, name string) error {
	_, err := tx.ExecContext(ctx, `UPDATE organizations SET name = ?, updated_at = ? WHERE id = ?`, name, TS(tx.Now), orgID)
	return err
}

func mergeJSON(doc string, patch map[string]any) string {
	if patch == nil {
		return doc
	}
	m := map[string]any{}
	_ = json.Unmarshal([]byte(doc), &m)
	for k, v := range patch {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// findOrgTx reads an org inside a write transaction.
func findOrgTx(ctx context.Context, tx *Tx, orgID string) (*Organization, error) {
	o, err := scanOrg(tx.QueryRowContext(ctx, `SELECT `+orgCols+` FROM organizations WHERE id = ?`, orgID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("organization")
	}
	return o, err
}
