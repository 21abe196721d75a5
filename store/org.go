package store

import (
	"context"
	"database/sql"
	"errors"
	"regexp"
	"strings"
	"time"
)

// Organization is a tenant. Personal orgs are created with each account.
type Organization struct {
	ID        string
	Name      string
	Slug      string
	Personal  bool
	Branding  string // JSON object
	Settings  string // JSON object
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Membership is a user's role in an org.
type Membership struct {
	OrgID     string
	UserID    string
	Role      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// RoleOwner is the one role the spec fixes; the others live with the permission matrix.
const RoleOwner = "owner"

const orgCols = `id, name, slug, personal, branding, settings, created_at, updated_at`

func scanOrg(row interface{ Scan(...any) error }) (*Organization, error) {
	var o Organization
	var created, updated string
	if err := row.Scan(&o.ID, &o.Name, &o.Slug, &o.Personal, &o.Branding, &o.Settings, &created, &updated); err != nil {
		return nil, err
	}
	o.CreatedAt, o.UpdatedAt = ParseTS(created), ParseTS(updated)
	return &o, nil
}

var slugStrip = regexp.MustCompile(`[^a-z0-9]+`)

// Slugify turns a name into a url-safe slug.
func Slugify(name string) string {
	s := strings.Trim(slugStrip.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if len(s) > 48 {
		s = strings.Trim(s[:48], "-")
	}
	if s == "" {
		s = "org"
	}
	return s
}

// createOrgTx inserts o with ownerID as its owner, choosing a free slug.
func createOrgTx(ctx context.Context, tx *Tx, o *Organization, ownerID string) error {
	o.ID = NewID()
	o.CreatedAt, o.UpdatedAt = tx.Now, tx.Now
	if o.Branding == "" {
		o.Branding = "{}"
	}
	if o.Settings == "" {
		o.Settings = "{}"
	}
	base := o.Slug
	if base == "" {
		base = Slugify(o.Name)
	}
	o.Slug = base
	for i := 0; ; i++ {
		if i > 0 {
			// The id's random tail keeps slugs unique without a loop of guesses.
			o.Slug = base + "-" + o.ID[len(o.ID)-6:]
			if i > 1 {
				o.Slug = base + "-" + NewID()[24:]
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO organizations (`+orgCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			o.ID, o.Name, o.Slug, o.Personal, o.Branding, o.Settings, TS(tx.Now), TS(tx.Now))
		if isUnique(err) && i < 3 {
			continue
		}
		if err != nil {
			return err
		}
		break
	}
	return addMemberTx(ctx, tx, o.ID, ownerID, RoleOwner)
}

// addMemberTx adds a membership; an existing one is a conflict.
func addMemberTx(ctx context.Context, tx *Tx, orgID, userID, role string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO org_members (org_id, user_id, role, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`,
		orgID, userID, role, TS(tx.Now), TS(tx.Now))
	if isUnique(err) {
		return Errorf(EConflict, "already a member of this organization")
	}
	return err
}

// FindOrgByID returns an org only when userID is a member: other tenants read as not found.
func (db *DB) FindOrgByID(ctx context.Context, userID, orgID string) (*Organization, string, error) {
	var role string
	row := db.r.QueryRowContext(ctx, `SELECT o.id, o.name, o.slug, o.personal, o.branding, o.settings, o.created_at, o.updated_at, m.role
		FROM organizations o JOIN org_members m ON m.org_id = o.id AND m.user_id = ? WHERE o.id = ?`, userID, orgID)
	var o Organization
	var created, updated string
	err := row.Scan(&o.ID, &o.Name, &o.Slug, &o.Personal, &o.Branding, &o.Settings, &created, &updated, &role)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, "", NotFound("organization")
	}
	if err != nil {
		return nil, "", err
	}
	o.CreatedAt, o.UpdatedAt = ParseTS(created), ParseTS(updated)
	return &o, role, nil
}

// OrgWithRole is an org seen by one of its members.
type OrgWithRole struct {
	Organization
	Role string
}

// FindOrgsForUser lists the orgs a user belongs to, oldest membership first.
func (db *DB) FindOrgsForUser(ctx context.Context, userID string) ([]OrgWithRole, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT o.id, o.name, o.slug, o.personal, o.branding, o.settings, o.created_at, o.updated_at, m.role
		FROM organizations o JOIN org_members m ON m.org_id = o.id WHERE m.user_id = ? ORDER BY m.created_at, o.id`, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []OrgWithRole
	for rows.Next() {
		var x OrgWithRole
		var created, updated string
		if err := rows.Scan(&x.ID, &x.Name, &x.Slug, &x.Personal, &x.Branding, &x.Settings, &created, &updated, &x.Role); err != nil {
			return nil, err
		}
		x.CreatedAt, x.UpdatedAt = ParseTS(created), ParseTS(updated)
		out = append(out, x)
	}
	return out, rows.Err()
}

// FindRole returns the user's role in an org, or a not-found error.
func (db *DB) FindRole(ctx context.Context, orgID, userID string) (string, error) {
	var role string
	err := db.r.QueryRowContext(ctx, `SELECT role FROM org_members WHERE org_id = ? AND user_id = ?`, orgID, userID).Scan(&role)
	if errors.Is(err, sql.ErrNoRows) {
		return "", NotFound("organization")
	}
	return role, err
}

// soleOwnedOrgsTx lists orgs (other than solo personal ones) where userID is the
// only owner while other members remain: deleting the account would orphan them.
func soleOwnedOrgsTx(ctx context.Context, q Querier, userID string) ([]string, error) {
	return queryStrings(ctx, q, `SELECT m.org_id FROM org_members m
		WHERE m.user_id = ? AND m.role = 'owner'
		AND (SELECT COUNT(*) FROM org_members o WHERE o.org_id = m.org_id AND o.role = 'owner') = 1
		AND (SELECT COUNT(*) FROM org_members o WHERE o.org_id = m.org_id) > 1`, userID)
}

// ShareOrg reports whether two users are members of at least one common org.
func (db *DB) ShareOrg(ctx context.Context, a, b string) (bool, error) {
	var n int
	err := db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM org_members x JOIN org_members y ON x.org_id = y.org_id
		WHERE x.user_id = ? AND y.user_id = ?`, a, b).Scan(&n)
	return n > 0, err
}
