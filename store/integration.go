package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"
)

// Integration kinds: the monitoring systems the agent's query tools reach.
const (
	IntegrationPrometheus   = "prometheus"
	IntegrationAlertmanager = "alertmanager"
	IntegrationGrafana      = "grafana"
	IntegrationLoki         = "loki"
)

// MaxIntegrationsPerProject bounds one project's integrations.
const MaxIntegrationsPerProject = 100

// Integration is a monitoring endpoint of a project. AuthSecret names a
// secret (project or org) holding the credential; it is resolved only when
// a tool calls the endpoint.
type Integration struct {
	ID         string
	OrgID      string
	ProjectID  string
	Kind       string
	Name       string
	BaseURL    string
	AuthScheme string // none, bearer, basic
	AuthSecret string
	OrgHeader  string
	Enabled    bool
	CreatedBy  string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

const integrationCols = `id, org_id, project_id, kind, name, base_url, auth_scheme, auth_secret, org_header, enabled,
	COALESCE(created_by, ''), created_at, updated_at`

func scanIntegration(row interface{ Scan(...any) error }) (*Integration, error) {
	var x Integration
	var created, updated string
	err := row.Scan(&x.ID, &x.OrgID, &x.ProjectID, &x.Kind, &x.Name, &x.BaseURL, &x.AuthScheme, &x.AuthSecret,
		&x.OrgHeader, &x.Enabled, &x.CreatedBy, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("integration")
	}
	if err != nil {
		return nil, err
	}
	x.CreatedAt, x.UpdatedAt = ParseTS(created), ParseTS(updated)
	return &x, nil
}

// FindIntegrations lists a project's integrations by kind and name.
func (db *DB) FindIntegrations(ctx context.Context, orgID, projectID string) ([]Integration, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+integrationCols+` FROM integrations WHERE org_id = ? AND project_id = ?
		ORDER BY kind, name`, orgID, projectID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out, err := collectRows(rows, scanIntegration)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// FindIntegration returns one integration of a project.
func (db *DB) FindIntegration(ctx context.Context, orgID, projectID, id string) (*Integration, error) {
	return scanIntegration(db.r.QueryRowContext(ctx, `SELECT `+integrationCols+` FROM integrations
		WHERE id = ? AND org_id = ? AND project_id = ?`, id, orgID, projectID))
}

// CreateIntegration inserts x; a name already used in the project is a conflict.
func (db *DB) CreateIntegration(ctx context.Context, x *Integration) error {
	return db.Write(ctx, func(tx *Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM integrations WHERE org_id = ? AND project_id = ?`,
			x.OrgID, x.ProjectID).Scan(&n); err != nil {
			return err
		}
		if n >= MaxIntegrationsPerProject {
			return &Error{Code: EConflict, Message: "too many integrations in this project", Reason: "integration_limit"}
		}
		x.ID, x.CreatedAt, x.UpdatedAt = NewID(), tx.Now, tx.Now
		_, err := tx.ExecContext(ctx, `INSERT INTO integrations (id, org_id, project_id, kind, name, base_url, auth_scheme, auth_secret,
			org_header, enabled, created_by, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			x.ID, x.OrgID, x.ProjectID, x.Kind, x.Name, x.BaseURL, x.AuthScheme, x.AuthSecret, x.OrgHeader, x.Enabled,
			nullStr(x.CreatedBy), TS(x.CreatedAt), TS(x.UpdatedAt))
		if isUnique(err) {
			return &Error{Code: EConflict, Message: "an integration with this name exists", Reason: "integration_name_taken"}
		}
		return err
	})
}

// UpdateIntegration rewrites x's mutable fields (kind stays).
func (db *DB) UpdateIntegration(ctx context.Context, x *Integration) error {
	return db.Write(ctx, func(tx *Tx) error {
		x.UpdatedAt = tx.Now
		res, err := tx.ExecContext(ctx, `UPDATE integrations SET name = ?, base_url = ?, auth_scheme = ?, auth_secret = ?,
			org_header = ?, enabled = ?, updated_at = ? WHERE id = ? AND org_id = ? AND project_id = ?`, x.Name, x.BaseURL,
			x.AuthScheme, x.AuthSecret, x.OrgHeader, x.Enabled, TS(x.UpdatedAt), x.ID, x.OrgID, x.ProjectID)
		if isUnique(err) {
			return &Error{Code: EConflict, Message: "an integration with this name exists", Reason: "integration_name_taken"}
		}
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return NotFound("integration")
		}
		return nil
	})
}

// DeleteIntegration removes one integration of a project.
func (db *DB) DeleteIntegration(ctx context.Context, orgID, projectID, id string) error {
	return db.Write(ctx, func(tx *Tx) error {
		return execOne(ctx, tx, "integration", `DELETE FROM integrations WHERE id = ? AND org_id = ? AND project_id = ?`, id, orgID, projectID)
	})
}

// FindHTTPAllowlist returns the private addresses (CIDRs, host names) a
// project's http_request may reach; none when never set.
func (db *DB) FindHTTPAllowlist(ctx context.Context, orgID, projectID string) ([]string, error) {
	var raw string
	err := db.r.QueryRowContext(ctx, `SELECT entries FROM http_allowlists WHERE project_id = ? AND org_id = ?`,
		projectID, orgID).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return []string{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := []string{}
	_ = json.Unmarshal([]byte(raw), &out)
	return out, nil
}

// PutHTTPAllowlist replaces a project's allow-list.
func (db *DB) PutHTTPAllowlist(ctx context.Context, orgID, projectID, actor string, entries []string) error {
	b, err := json.Marshal(entries)
	if err != nil {
		return err
	}
	return db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO http_allowlists (project_id, org_id, entries, updated_by, updated_at)
			VALUES (?,?,?,?,?) ON CONFLICT(project_id) DO UPDATE SET entries = excluded.entries,
			updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
			projectID, orgID, string(b), nullStr(actor), TS(tx.Now))
		return err
	})
}
