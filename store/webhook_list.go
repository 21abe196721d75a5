package store

import "context"

// FindWebhooks returns the webhooks of one project's tasks, oldest task
// first, and how many there are. The console lists them instead of asking
// every task for its webhook (which answers 404 for tasks without one).
func (db *DB) FindWebhooks(ctx context.Context, orgID, projectID string, limit, offset int) ([]Webhook, int, error) {
	var total int
	if err := db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM webhooks w WHERE w.org_id = ? AND w.project_id = ?`, orgID, projectID).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := db.r.QueryContext(ctx, `SELECT `+webhookCols+` FROM webhooks w JOIN tasks t ON t.id = w.task_id
		WHERE w.org_id = ? AND w.project_id = ? ORDER BY w.task_id LIMIT ? OFFSET ?`, orgID, projectID, limit, offset)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out := []Webhook{}
	for rows.Next() {
		w, err := scanWebhook(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, *w)
	}
	return out, total, rows.Err()
}
