package store

import "context"

// CreateProjectTx inserts p into its org (p.OrgID), filling ID, a free slug
// (from the name unless p.Slug is set) and the times.
func CreateProjectTx(ctx context.Context, tx *Tx, p *Project) error {
	p.ID = NewID()
	p.CreatedAt, p.UpdatedAt = tx.Now, tx.Now
	if p.Settings == "" {
		p.Settings = "{}"
	}
	base := p.Slug
	if base == "" {
		base = Slugify(p.Name)
	}
	p.Slug = base
	var taken int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM projects WHERE org_id = ? AND slug = ?`, p.OrgID, base).Scan(&taken); err != nil {
		return err
	}
	if taken > 0 {
		// The id's random tail keeps slugs unique without a loop of guesses.
		p.Slug = base + "-" + p.ID[len(p.ID)-6:]
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO projects (`+projectCols+`) VALUES (?,?,?,?,?,?,?,?,?)`,
		p.ID, p.OrgID, p.Name, p.Slug, p.Description, p.Settings, nullTS(p.ArchivedAt), TS(p.CreatedAt), TS(p.UpdatedAt))
	return err
}
