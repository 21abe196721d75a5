package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"
)

// MaxConnectorsPerProject bounds one project's connectors.
const MaxConnectorsPerProject = 1000

// Connector is an outbound-only agent on one of a project's hosts. Only a
// hash of its enrollment token is kept (TokenHash under TokenPrefix); the
// host facts are what the connector last reported.
type Connector struct {
	ID         string
	OrgID      string
	ProjectID  string
	Name       string
	Labels     map[string]string
	AllowList  []string
	Prefix     string
	TokenHash  []byte
	Hostname   string
	OS         string
	Version    string
	LastIP     string
	LastSeenAt *time.Time
	RevokedAt  *time.Time
	CreatedBy  string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

const connectorCols = `id, org_id, project_id, name, labels, allow_list, token_prefix, token_hash, hostname, os, version,
	last_ip, last_seen_at, revoked_at, COALESCE(created_by, ''), created_at, updated_at`

func scanConnector(row interface{ Scan(...any) error }) (*Connector, error) {
	var x Connector
	var labels, allow, created, updated string
	var seen, revoked sql.NullString
	err := row.Scan(&x.ID, &x.OrgID, &x.ProjectID, &x.Name, &labels, &allow, &x.Prefix, &x.TokenHash, &x.Hostname,
		&x.OS, &x.Version, &x.LastIP, &seen, &revoked, &x.CreatedBy, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("connector")
	}
	if err != nil {
		return nil, err
	}
	_ = json.Unmarshal([]byte(labels), &x.Labels)
	_ = json.Unmarshal([]byte(allow), &x.AllowList)
	if x.Labels == nil {
		x.Labels = map[string]string{}
	}
	if x.AllowList == nil {
		x.AllowList = []string{}
	}
	x.LastSeenAt, x.RevokedAt = scanNullTS(seen), scanNullTS(revoked)
	x.CreatedAt, x.UpdatedAt = ParseTS(created), ParseTS(updated)
	return &x, nil
}

func encodeConnector(x *Connector) (labels, allow string) {
	if x.Labels == nil {
		x.Labels = map[string]string{}
	}
	if x.AllowList == nil {
		x.AllowList = []string{}
	}
	l, _ := json.Marshal(x.Labels)
	a, _ := json.Marshal(x.AllowList)
	return string(l), string(a)
}

// FindConnectors lists a project's connectors by name.
func (db *DB) FindConnectors(ctx context.Context, orgID, projectID string) ([]Connector, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+connectorCols+` FROM connectors WHERE org_id = ? AND project_id = ?
		ORDER BY name`, orgID, projectID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return collectRows(rows, scanConnector)
}

// FindConnector returns one connector of a project.
func (db *DB) FindConnector(ctx context.Context, orgID, projectID, id string) (*Connector, error) {
	return scanConnector(db.r.QueryRowContext(ctx, `SELECT `+connectorCols+` FROM connectors
		WHERE id = ? AND org_id = ? AND project_id = ?`, id, orgID, projectID))
}

// FindConnectorByPrefix finds the connector a token names; the caller
// compares the token's hash in constant time.
func (db *DB) FindConnectorByPrefix(ctx context.Context, prefix string) (*Connector, error) {
	return scanConnector(db.r.QueryRowContext(ctx, `SELECT `+connectorCols+` FROM connectors WHERE token_prefix = ?`, prefix))
}

// CreateConnector inserts x (OrgID, ProjectID, Name, Labels, AllowList,
// Prefix, TokenHash, CreatedBy set by the caller).
func (db *DB) CreateConnector(ctx context.Context, x *Connector) error {
	labels, allow := encodeConnector(x)
	return db.Write(ctx, func(tx *Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM connectors WHERE org_id = ? AND project_id = ?`,
			x.OrgID, x.ProjectID).Scan(&n); err != nil {
			return err
		}
		if n >= MaxConnectorsPerProject {
			return &Error{Code: EConflict, Message: "too many connectors in this project", Reason: "connector_limit"}
		}
		if err := tx.CheckQuota(ctx, QuotaConnectors, x.OrgID, 1); err != nil {
			return err
		}
		x.ID, x.CreatedAt, x.UpdatedAt = NewID(), tx.Now, tx.Now
		_, err := tx.ExecContext(ctx, `INSERT INTO connectors (id, org_id, project_id, name, labels, allow_list, token_prefix,
			token_hash, created_by, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
			x.ID, x.OrgID, x.ProjectID, x.Name, labels, allow, x.Prefix, x.TokenHash, nullStr(x.CreatedBy),
			TS(x.CreatedAt), TS(x.UpdatedAt))
		if isUnique(err) {
			return &Error{Code: EConflict, Message: "a connector with this name exists in the project", Reason: "connector_name_taken"}
		}
		return err
	})
}

// UpdateConnector rewrites name, labels and the server-side allow-list.
func (db *DB) UpdateConnector(ctx context.Context, x *Connector) error {
	labels, allow := encodeConnector(x)
	return db.Write(ctx, func(tx *Tx) error {
		x.UpdatedAt = tx.Now
		res, err := tx.ExecContext(ctx, `UPDATE connectors SET name = ?, labels = ?, allow_list = ?, updated_at = ?
			WHERE id = ? AND org_id = ? AND project_id = ?`, x.Name, labels, allow, TS(x.UpdatedAt), x.ID, x.OrgID, x.ProjectID)
		if isUnique(err) {
			return &Error{Code: EConflict, Message: "a connector with this name exists in the project", Reason: "connector_name_taken"}
		}
		return connectorAffected(res, err, "connector")
	})
}

// RotateConnectorToken replaces the token (prefix and hash); the old one
// stops working at once. A revoked connector stays revoked.
func (db *DB) RotateConnectorToken(ctx context.Context, orgID, projectID, id, prefix string, hash []byte) error {
	return db.Write(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE connectors SET token_prefix = ?, token_hash = ?, updated_at = ?
			WHERE id = ? AND org_id = ? AND project_id = ?`, prefix, hash, TS(tx.Now), id, orgID, projectID)
		return connectorAffected(res, err, "connector")
	})
}

// RevokeConnector marks the connector revoked (idempotent).
func (db *DB) RevokeConnector(ctx context.Context, orgID, projectID, id string) error {
	return db.Write(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE connectors SET revoked_at = COALESCE(revoked_at, ?), updated_at = ?
			WHERE id = ? AND org_id = ? AND project_id = ?`, TS(tx.Now), TS(tx.Now), id, orgID, projectID)
		return connectorAffected(res, err, "connector")
	})
}

// DeleteConnector removes one connector of a project.
func (db *DB) DeleteConnector(ctx context.Context, orgID, projectID, id string) error {
	return db.Write(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM connectors WHERE id = ? AND org_id = ? AND project_id = ?`, id, orgID, projectID)
		return connectorAffected(res, err, "connector")
	})
}

// ConnectorSeen is what a connector reported, and when it was last heard.
type ConnectorSeen struct {
	ID, Hostname, OS, Version, IP string
	At                            time.Time
}

// TouchConnectors records host facts and last-seen times in one
// transaction (the hub flushes them in batches, not per heartbeat).
func (db *DB) TouchConnectors(ctx context.Context, seen []ConnectorSeen) error {
	if len(seen) == 0 {
		return nil
	}
	return db.Write(ctx, func(tx *Tx) error {
		for _, s := range seen {
			if _, err := tx.ExecContext(ctx, `UPDATE connectors SET hostname = ?, os = ?, version = ?, last_ip = ?,
				last_seen_at = ? WHERE id = ?`, s.Hostname, s.OS, s.Version, s.IP, TS(s.At), s.ID); err != nil {
				return err
			}
		}
		return nil
	})
}

// ProjectCommandTimeoutMax is the longest a project's run_command may run.
func (db *DB) ProjectCommandTimeoutMax(ctx context.Context, orgID, projectID string) (time.Duration, error) {
	var secs int64
	err := db.r.QueryRowContext(ctx, `SELECT command_timeout_max FROM projects WHERE id = ? AND org_id = ?`, projectID, orgID).Scan(&secs)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, NotFound("project")
	}
	return time.Duration(secs) * time.Second, err
}

// SetProjectCommandTimeoutMax sets it.
func (db *DB) SetProjectCommandTimeoutMax(ctx context.Context, orgID, projectID string, d time.Duration) error {
	return db.Write(ctx, func(tx *Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE projects SET command_timeout_max = ? WHERE id = ? AND org_id = ?`,
			int64(d/time.Second), projectID, orgID)
		return connectorAffected(res, err, "project")
	})
}

func connectorAffected(res sql.Result, err error, what string) error {
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return NotFound(what)
	}
	return nil
}
