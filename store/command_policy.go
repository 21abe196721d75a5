package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"
)

// CommandPolicy is a project's settings for run_command analysis: whether
// provably read-only calls run without a person, its additions to the
// read-only list, and its additions to the effect categories.
type CommandPolicy struct {
	OrgID             string
	ProjectID         string
	AutoAllowReadOnly bool
	ReadOnlyCommands  []string
	Effects           map[string][]string
	UpdatedBy         string
	UpdatedAt         time.Time // zero: never set
}

// FindCommandPolicy returns the project's policy; a project that never set
// one gets the defaults (nothing automatic, no additions).
func (db *DB) FindCommandPolicy(ctx context.Context, orgID, projectID string) (*CommandPolicy, error) {
	p := &CommandPolicy{OrgID: orgID, ProjectID: projectID, ReadOnlyCommands: []string{}, Effects: map[string][]string{}}
	var ro, eff, updated string
	var by sql.NullString
	err := db.r.QueryRowContext(ctx, `SELECT auto_allow_read_only, read_only_commands, effects, updated_by, updated_at
		FROM command_policies WHERE org_id = ? AND project_id = ?`, orgID, projectID).Scan(&p.AutoAllowReadOnly, &ro, &eff, &by, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return p, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(ro), &p.ReadOnlyCommands); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(eff), &p.Effects); err != nil {
		return nil, err
	}
	p.UpdatedBy, p.UpdatedAt = by.String, ParseTS(updated)
	return p, nil
}

// PutCommandPolicy replaces the project's policy.
func (db *DB) PutCommandPolicy(ctx context.Context, p *CommandPolicy) error {
	ro, err := json.Marshal(p.ReadOnlyCommands)
	if err != nil {
		return err
	}
	eff, err := json.Marshal(p.Effects)
	if err != nil {
		return err
	}
	return db.Write(ctx, func(tx *Tx) error {
		p.UpdatedAt = tx.Now
		_, err := tx.ExecContext(ctx, `INSERT INTO command_policies (project_id, org_id, auto_allow_read_only, read_only_commands,
			effects, updated_by, updated_at) VALUES (?,?,?,?,?,?,?)
			ON CONFLICT(project_id) DO UPDATE SET auto_allow_read_only = excluded.auto_allow_read_only,
			read_only_commands = excluded.read_only_commands, effects = excluded.effects, updated_by = excluded.updated_by,
			updated_at = excluded.updated_at WHERE command_policies.org_id = excluded.org_id`,
			p.ProjectID, p.OrgID, p.AutoAllowReadOnly, string(ro), string(eff), nullStr(p.UpdatedBy), TS(p.UpdatedAt))
		return err
	})
}
