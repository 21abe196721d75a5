package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"time"
)

// Change sources. Other packages may add their own (kube adds
// "kubernetes"); the store keeps any non-empty word.
const (
	ChangeSourceGitHub     = "github"
	ChangeSourceGitLab     = "gitlab"
	ChangeSourceGeneric    = "generic"
	ChangeSourceAgent      = "agent"
	ChangeSourceAPI        = "api"
	ChangeSourceKubernetes = "kubernetes"
)

// ChangeRetention is how long the feed keeps a change (the
// webhook-retention job deletes older ones): an investigation looks back
// hours, a postmortem weeks.
const ChangeRetention = 90 * 24 * time.Hour

// ChangeDedupeWindow: a change sent without an external_id or occurred_at
// is a duplicate of the same content within this window (the webhook
// receiver's dedupe, for callers that give no identity).
const ChangeDedupeWindow = time.Minute

// Change is one deploy, release, configuration change or approved action
// in a project's change feed.
type Change struct {
	ID          string
	OrgID       string
	ProjectID   string
	Source      string
	Kind        string
	Title       string
	Service     string
	Environment string
	Description string
	URL         string
	Labels      map[string]string
	Author      string
	ExternalID  string
	OccurredAt  time.Time // zero: now
	CreatedAt   time.Time
	// Duplicate is set by InsertChange when the change was stored before
	// (same external_id, or same content within ChangeDedupeWindow); the
	// returned change is then the stored one.
	Duplicate bool
}

// ChangeFilter selects a page of a project's changes, newest first.
type ChangeFilter struct {
	OrgID, ProjectID string
	Since, Until     *time.Time // occurred_at >= Since, < Until
	Service          string
	Source           string
	Labels           map[string]string // every pair must match
	Limit, Offset    int
}

const changeCols = `id, org_id, project_id, source, kind, title, service, environment, description, url, labels, author, external_id, occurred_at, created_at`

func scanChange(row rowScanner) (*Change, error) {
	var c Change
	var labels, occurred, created string
	err := row.Scan(&c.ID, &c.OrgID, &c.ProjectID, &c.Source, &c.Kind, &c.Title, &c.Service, &c.Environment, &c.Description,
		&c.URL, &labels, &c.Author, &c.ExternalID, &occurred, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("change")
	}
	if err != nil {
		return nil, err
	}
	c.Labels = map[string]string{}
	_ = json.Unmarshal([]byte(labels), &c.Labels)
	c.OccurredAt, c.CreatedAt = ParseTS(occurred), ParseTS(created)
	return &c, nil
}

// InsertChange adds a change to its project's feed, once: a second change
// with the same source and external_id (or, without one, the same content
// and occurred_at, or the same content within ChangeDedupeWindow when it has
// no time either) returns the first with Duplicate set. The project must
// belong to the org.
func (db *DB) InsertChange(ctx context.Context, c Change) (*Change, error) {
	if strings.TrimSpace(c.Title) == "" || c.Source == "" || c.Kind == "" {
		return nil, &Error{Code: EInvalid, Message: "a change needs a title, a source and a kind"}
	}
	if c.Labels == nil {
		c.Labels = map[string]string{}
	}
	labels, _ := json.Marshal(c.Labels)
	var out *Change
	err := db.Write(ctx, func(tx *Tx) error {
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM projects WHERE id = ? AND org_id = ?`, c.ProjectID, c.OrgID).Scan(&one); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return NotFound("project")
			}
			return err
		}
		n := c
		n.ID, n.CreatedAt, n.Duplicate = NewID(), tx.Now, false
		timed := !n.OccurredAt.IsZero()
		if !timed {
			n.OccurredAt = tx.Now
		}
		key := changeDedupeKey(&n, timed, tx.Now)
		prev, err := scanChange(tx.QueryRowContext(ctx, `SELECT `+changeCols+` FROM changes WHERE project_id = ? AND source = ? AND dedupe_key = ?`,
			n.ProjectID, n.Source, key))
		switch {
		case err == nil:
			prev.Duplicate, out = true, prev
			return nil
		case !IsNotFound(err):
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO changes (`+changeCols+`, label_pairs, dedupe_key) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			n.ID, n.OrgID, n.ProjectID, n.Source, n.Kind, n.Title, n.Service, n.Environment, n.Description, n.URL, string(labels),
			n.Author, n.ExternalID, TS(n.OccurredAt), TS(n.CreatedAt), labelPairs(n.Labels), key)
		out = &n
		return err
	})
	return out, err
}

// changeDedupeKey is the caller's identity of the change when it gave one,
// else a hash of what the change says (with its time, or with the minute it
// arrived in when it has none).
func changeDedupeKey(c *Change, timed bool, now time.Time) string {
	if c.ExternalID != "" {
		return "ext:" + c.ExternalID
	}
	h := sha256.New()
	for _, s := range []string{c.Kind, c.Title, c.Service, c.Environment, c.Description, c.URL, c.Author, labelPairs(c.Labels)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	if timed {
		h.Write([]byte(TS(c.OccurredAt)))
	} else {
		h.Write([]byte(TS(now.Truncate(ChangeDedupeWindow))))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// labelPairs is "|k=v|k2=v2|" in key order: the label filter matches
// "%|k=v|%" against it, so no JSON function (which the two databases spell
// differently) is needed.
func labelPairs(m map[string]string) string {
	if len(m) == 0 {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteByte('|')
	for _, k := range keys {
		b.WriteString(k + "=" + m[k] + "|")
	}
	return b.String()
}

// ChangeCountCap bounds the count behind a page of the feed: a project's
// feed holds 100k changes and more, and counting every match of a filter
// costs a pass over them (issue 36's list row: 90-150 ms a page at 100k, the
// count nearly all of it). Past the cap the total says "at least".
const ChangeCountCap = 1000

// ChangeTotal is how many changes match a filter: exact, or at least N when
// Capped.
type ChangeTotal struct {
	N      int
	Capped bool
}

// ListChanges returns a page of a project's changes, newest first, and
// how many match (counted up to ChangeCountCap).
func (db *DB) ListChanges(ctx context.Context, f ChangeFilter) ([]Change, int, error) {
	cs, t, err := db.ListChangesCounted(ctx, f)
	return cs, t.N, err
}

// ListChangesCounted is ListChanges with whether the count stopped at the cap.
func (db *DB) ListChangesCounted(ctx context.Context, f ChangeFilter) ([]Change, ChangeTotal, error) {
	q := scopedList(f.OrgID, f.ProjectID).since("occurred_at", f.Since, f.Until).eq("service", f.Service).eq("source", f.Source)
	keys := make([]string, 0, len(f.Labels))
	for k := range f.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		q.and(`label_pairs LIKE ? ESCAPE '\'`, "%|"+likeEscape(k+"="+f.Labels[k])+"|%")
	}
	if f.Limit <= 0 {
		f.Limit = 50
	}
	cond := q.cond()
	rows, err := db.readRows(ctx, `SELECT `+changeCols+` FROM changes WHERE `+cond+
		` ORDER BY occurred_at DESC, id DESC LIMIT CAST(? AS INTEGER) OFFSET CAST(? AS INTEGER)`, append(append([]any{}, q.args...), f.Limit, f.Offset)...)
	if err != nil {
		return nil, ChangeTotal{}, err
	}
	defer rows.Close()
	out := []Change{}
	for rows.Next() {
		c, err := scanChange(rows)
		if err != nil {
			return nil, ChangeTotal{}, err
		}
		out = append(out, *c)
	}
	if err := rows.Err(); err != nil {
		return nil, ChangeTotal{}, err
	}
	rows.Close()
	// A page that is not full ends the matches: nothing to count.
	if len(out) < f.Limit && (len(out) > 0 || f.Offset == 0) {
		return out, ChangeTotal{N: f.Offset + len(out)}, nil
	}
	var n int
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM changes WHERE `+cond+` LIMIT CAST(? AS INTEGER)) AS m`,
		append(append([]any{}, q.args...), ChangeCountCap+1)...).Scan(&n); err != nil {
		return nil, ChangeTotal{}, err
	}
	t := ChangeTotal{N: n}
	if n > ChangeCountCap {
		t = ChangeTotal{N: ChangeCountCap, Capped: true}
	}
	// A page beyond the cap still counts what it skipped.
	if len(out) > 0 {
		t.N = max(t.N, f.Offset+len(out))
	}
	return out, t, nil
}

// FindChangeByID returns one change of a project.
func (db *DB) FindChangeByID(ctx context.Context, orgID, projectID, id string) (*Change, error) {
	return scanChange(db.r.QueryRowContext(ctx, `SELECT `+changeCols+` FROM changes WHERE id = ? AND org_id = ? AND project_id = ?`, id, orgID, projectID))
}

// SweepChanges deletes changes older than ChangeRetention, batch rows per
// transaction.
func (db *DB) SweepChanges(ctx context.Context, now time.Time, batch int) (int, error) {
	cut := TS(now.Add(-ChangeRetention))
	total := 0
	for {
		var n int64
		err := db.Write(ctx, func(tx *Tx) error {
			res, err := tx.ExecContext(ctx, `DELETE FROM changes WHERE id IN (SELECT id FROM changes WHERE created_at < ? LIMIT ?)`, cut, batch)
			if err != nil {
				return err
			}
			n, _ = res.RowsAffected()
			return nil
		})
		if err != nil {
			return total, err
		}
		total += int(n)
		if n < int64(batch) {
			return total, nil
		}
	}
}
