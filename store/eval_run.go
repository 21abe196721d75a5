package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"
)

// Eval run statuses.
const (
	EvalRunning     = "running"
	EvalCompleted   = "completed"
	EvalFailed      = "failed"
	EvalInterrupted = "interrupted" // the server stopped while it ran
)

// EvalRun is one evaluation of an org: scenarios replayed against models.
type EvalRun struct {
	ID         string
	OrgID      string
	CreatedBy  string
	Status     string
	Models     []string
	Scenarios  int
	Repeats    int
	PassRate   float64
	Report     string // the report's JSON, "" until finished
	Error      string
	CreatedAt  time.Time
	FinishedAt time.Time
}

const evalRunCols = `id, org_id, created_by, status, models, scenarios, repeats, pass_rate, report, error, created_at, finished_at`

func scanEvalRun(row rowScanner) (*EvalRun, error) {
	var e EvalRun
	var models, created, finished string
	err := row.Scan(&e.ID, &e.OrgID, &e.CreatedBy, &e.Status, &models, &e.Scenarios, &e.Repeats, &e.PassRate, &e.Report, &e.Error, &created, &finished)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("evaluation")
	}
	if err != nil {
		return nil, err
	}
	_ = json.Unmarshal([]byte(models), &e.Models)
	e.CreatedAt = ParseTS(created)
	if finished != "" {
		e.FinishedAt = ParseTS(finished)
	}
	return &e, nil
}

// InsertEvalRun records an evaluation that starts now.
func (db *DB) InsertEvalRun(ctx context.Context, e EvalRun) (*EvalRun, error) {
	models, _ := json.Marshal(e.Models)
	out := e
	err := db.Write(ctx, func(tx *Tx) error {
		out.ID, out.CreatedAt, out.Status = NewID(), tx.Now, EvalRunning
		_, err := tx.ExecContext(ctx, `INSERT INTO eval_runs (`+evalRunCols+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`,
			out.ID, out.OrgID, out.CreatedBy, out.Status, string(models), out.Scenarios, out.Repeats, 0.0, "", "", TS(out.CreatedAt), "")
		return err
	})
	return &out, err
}

// FinishEvalRun stores an evaluation's outcome (report JSON, or the error).
func (db *DB) FinishEvalRun(ctx context.Context, orgID, id, status string, passRate float64, report, errText string) error {
	return db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE eval_runs SET status = ?, pass_rate = ?, report = ?, error = ?, finished_at = ? WHERE id = ? AND org_id = ?`,
			status, passRate, report, errText, TS(tx.Now), id, orgID)
		return err
	})
}

// FindEvalRun returns one evaluation of an org.
func (db *DB) FindEvalRun(ctx context.Context, orgID, id string) (*EvalRun, error) {
	return scanEvalRun(db.r.QueryRowContext(ctx, `SELECT `+evalRunCols+` FROM eval_runs WHERE id = ? AND org_id = ?`, id, orgID))
}

// ListEvalRuns returns a page of an org's evaluations, newest first,
// without their reports.
func (db *DB) ListEvalRuns(ctx context.Context, orgID string, limit, offset int) ([]EvalRun, int, error) {
	q := &listQuery{where: []string{"org_id = ?"}, args: []any{orgID}}
	cols := `id, org_id, created_by, status, models, scenarios, repeats, pass_rate, '' AS report, error, created_at, finished_at`
	return listPage(ctx, db, "eval_runs", cols, q, "created_at DESC, id DESC", nil, limit, offset, scanEvalRun)
}
