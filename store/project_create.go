package store

import "context"

// CreateProjectTx inserts p into its org, filling its id, slug (from the name
// when empty, made unique within the org) and times.
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
	for i := 0; ; i++ {
		if i > 0 {
			p.Slug = base + "-" + NewID()[24:]
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO projects (`+projectCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			p.ID, p.OrgID, p.Name, p.Slug, p.Description, p.Settings, nullTS(p.ArchivedAt), TS(tx.Now), TS(tx.Now))
		if isUnique(err) && i < 3 {
			continue
		}
		return err
	}
}
