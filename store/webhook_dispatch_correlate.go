package store

import (
	"context"
	"encoding/json"
)

// Correlation within a dispatch batch: the open incident an event joins by
// key, or the one it opens, and the alerts it adds to it.

// Correlation's statements (prepared on the writer connection by ingest).
// The lookup by key selects the incident's id only: in a storm of distinct
// groups nearly every lookup misses, and a miss of the 20-column form cost
// the driver its column names and types for every event; a hit reads the
// incident by id (once per batch and key: st.open). A key is an
// incident_keys row or an open incident's main_key (migration 0157): the
// arguments are project, key and window start, twice.
var queryOpenIncidentByKey = `SELECT id FROM (SELECT k.incident_id AS id, i.last_alert_at AS at FROM incident_keys k
	JOIN incidents i ON i.id = k.incident_id WHERE k.project_id = ? AND k.key = ? AND i.status != 'resolved'
	AND i.last_alert_at >= ?
	UNION ALL SELECT id, last_alert_at FROM incidents WHERE project_id = ? AND main_key = ? AND status != 'resolved'
	AND last_alert_at >= ?) AS found ORDER BY at DESC LIMIT 1`

var queryIncidentByID = `SELECT ` + incidentCols + `, open_fingerprints, main_key, main_key_held FROM incidents WHERE id = ?`

func init() { ingestStmts = append(ingestStmts, queryIncidentByID) }

const (
	insertIncidentKey   = `INSERT OR IGNORE INTO incident_keys (project_id, key, incident_id) VALUES (?,?,?)`
	insertIncidentAlert = `INSERT OR IGNORE INTO incident_alerts (incident_id, fingerprint) VALUES (?,?)`
	// Every incident a batch counts on went through newAlertsTx, which
	// moved its open_fingerprints into incident_alerts.
	updateIncidentCounts = `UPDATE incidents SET alert_count = alert_count + ?, event_count = event_count + ?,
	last_alert_at = ?, updated_at = ?, session_id = COALESCE(session_id, ?), open_fingerprints = NULL WHERE id = ?`
)

// correlateTx finds an open incident sharing a key within the window and
// adds the event to it (joined true), or opens a new incident for firing
// alerts (joined false). A provider transition (acknowledged, resolved)
// moves the incident it lands on.
func correlateTx(ctx context.Context, st *txStmts, e *WebhookEvent, c *Correlation) (*Incident, bool, error) {
	tx := st.tx
	var inc *Incident
	for _, k := range c.Keys {
		if i := st.open[string(st.projectKey(e.ProjectID, k))]; i != nil {
			inc = i // joined earlier in this batch: still open, within its window
			break
		}
		found, err := st.keyFind(ctx, e.ProjectID, k, c.Window)
		if err != nil {
			return nil, false, err
		}
		if found != nil {
			// The database maps k (and its main key) to it already: the
			// batch adds neither again.
			inc = found
			st.open[e.ProjectID+"\x00"+k] = inc
			break
		}
	}
	joined := inc != nil
	if inc == nil {
		if !c.Firing || c.Transition == IncidentResolved {
			return nil, false, nil
		}
		inc = &Incident{ID: NewID(), OrgID: e.OrgID, ProjectID: e.ProjectID, TaskID: e.TaskID, Provider: e.Provider,
			Title: c.Title, Severity: c.Severity, Status: IncidentTriggered, OpenedAt: tx.Now, LastAlertAt: tx.Now,
			CreatedAt: tx.Now, UpdatedAt: tx.Now}
		st.openIncident(inc) // inserted by the flush, with its final counters
	}
	alerts, err := newAlertsTx(ctx, st, inc.ID, c)
	if err != nil {
		return nil, false, err
	}
	st.counted(inc, alerts)
	for _, k := range c.Keys {
		if st.open[string(st.projectKey(e.ProjectID, k))] == inc {
			continue
		}
		st.addKey(e.ProjectID, k, inc)
		st.open[e.ProjectID+"\x00"+k] = inc
	}
	// What json.Marshal of {alerts, event_id, event_type} gives, without
	// validating and compacting the alerts JSON again for every event.
	list := orJSON(c.Alerts, "[]")
	b := make([]byte, 0, len(`{"alerts":,"event_id":"","event_type":""}`)+len(list)+len(e.ID)+len(e.Type))
	b = append(append(append(append(b, `{"alerts":`...), list...), `,"event_id":"`...), e.ID...)
	b = append(appendJSONString(append(b, `","event_type":`...), e.Type), '}')
	st.alertEntry(inc.ID, c.Title, string(b))
	if c.Transition != "" && inc.Status != IncidentResolved && inc.Status != c.Transition {
		// The transition writes the incident's row and keys in place: the
		// batch's buffered rows go first.
		if err := st.flushPending(ctx); err != nil {
			return nil, false, err
		}
		if err := transitionIncidentTx(ctx, tx, inc, c.Transition, "", ""); err != nil {
			return nil, false, err
		}
		if inc.Status == IncidentResolved {
			for k, i := range st.open {
				if i == inc {
					delete(st.open, k) // its keys are gone: the next alert opens a new incident
				}
			}
		}
	}
	return inc, joined, nil
}

// newAlertsTx records the event's fingerprints on the incident and returns
// how many alerts the incident had not seen: the new fingerprints plus the
// alerts that carry none.
func newAlertsTx(ctx context.Context, st *txStmts, incidentID string, c *Correlation) (int, error) {
	n := c.AlertCount - len(c.Fingerprints)
	if n < 0 {
		n = 0
	}
	if p := st.pending[incidentID]; p != nil {
		// Opened by this batch: its fingerprints are all in memory.
		for _, fp := range c.Fingerprints {
			if p.addFingerprint(fp) {
				n++
			}
		}
		return n, nil
	}
	if fps, ok := st.unmoved[incidentID]; ok {
		// The fingerprints it opened with, counted then: rows from now on
		// (the counters' UPDATE clears open_fingerprints).
		delete(st.unmoved, incidentID)
		for _, fp := range fps {
			if _, err := st.exec(ctx, insertIncidentAlert, incidentID, fp); err != nil {
				return 0, err
			}
		}
	}
	for _, fp := range c.Fingerprints {
		res, err := st.exec(ctx, insertIncidentAlert, incidentID, fp)
		if err != nil {
			return 0, err
		}
		if added, _ := res.RowsAffected(); added > 0 {
			n++
		}
	}
	return n, nil
}

// holdUnmoved records an incident's open_fingerprints (JSON) for its
// first join in the batch (newAlertsTx).
func (s *txStmts) holdUnmoved(incidentID, fps string) error {
	var list []string
	if err := json.Unmarshal([]byte(fps), &list); err != nil {
		return err
	}
	s.unmoved[incidentID] = list
	return nil
}

// scanAlso scans a row's extra columns after the ones its caller asks for.
type scanAlso struct {
	row   interface{ Scan(...any) error }
	extra []any
}

func (s scanAlso) Scan(dest ...any) error { return s.row.Scan(append(dest, s.extra...)...) }
