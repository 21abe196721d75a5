package store

import (
	"context"
	"strings"
	"time"
)

// A dispatch batch (a group commit's inline dispatch, or a dispatcher
// transaction) writes its incident rows at its end, several rows per
// statement, instead of one statement per row as it goes. In an alert
// storm of distinct groups every event opens an incident: that was an
// INSERT of the incident, one of its key, one of its alert, two timeline
// INSERTs and, at the end, an UPDATE of the incident's counters (rewriting
// the row and its last_alert_at index entry) per event. Now an incident the
// batch opens is inserted once, with its final counters and run, and the
// batch's key, alert and timeline rows go in multi-row INSERTs.
//
// Nothing in the transaction reads those rows before the flush: the batch
// finds its own incidents by key in txStmts.open, counts a pending
// incident's fingerprints in memory, and flushes before anything that
// writes an incident's row or keys in place (a provider transition).
// Parents are inserted before their key and timeline rows (foreign keys).
//
// An opened incident's fingerprints go on its own row (open_fingerprints,
// migration 0156), not into incident_alerts: those rows serve only to
// count a later event's new alerts, so the first later join moves them
// there (newAlertsTx), and an incident nothing joins never writes them.
//
// Its first timeline entry (the opening event's alert entry and the
// entries its dispatch added) goes on its row too (opened_entry, migration
// 0158), not into incident_timeline: FindIncident merges it with the rows.

// pendingIncident is an incident the batch opened and has not inserted.
type pendingIncident struct {
	inc *Incident
	// order: its fingerprints so far, in the order they came; fps: the
	// same as a set once there are more than a few (addFingerprint).
	order []string
	fps   map[string]bool
	// mainKey is its first correlation key, stored on its row (main_key,
	// migration 0157); keys are its others so far (newKeyArgs).
	mainKey string
	keys    []string
	// entry is its first timeline entry (opened_entry): the alert entry
	// of the event that opened it, with that event's follow-ups.
	entry *timelineRow
}

// addFingerprint adds fp to p's fingerprints; false when p has it. An
// incident a storm opens has an alert or two: those are compared in
// order, and a set is made only past fewSeen (a map per opened incident
// was a hundredth of the writer's instructions).
func (p *pendingIncident) addFingerprint(fp string) bool {
	const fewSeen = 8
	if p.fps == nil {
		for _, have := range p.order {
			if have == fp {
				return false
			}
		}
		p.order = append(p.order, fp)
		if len(p.order) > fewSeen {
			p.fps = make(map[string]bool, 2*len(p.order))
			for _, have := range p.order {
				p.fps[have] = true
			}
		}
		return true
	}
	if p.fps[fp] {
		return false
	}
	p.fps[fp] = true
	p.order = append(p.order, fp)
	return true
}

// openFingerprints is p's open_fingerprints: a JSON array, NULL when none.
func (p *pendingIncident) openFingerprints() any {
	if len(p.order) == 0 {
		return nil
	}
	n := 2
	for _, fp := range p.order {
		n += len(fp) + 3
	}
	b := append(make([]byte, 0, n), '[')
	for i, fp := range p.order {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, fp)
	}
	return string(append(b, ']'))
}

// timelineRow is a buffered incident_timeline row (or an opened
// incident's first entry); follow holds the entries that followed an
// alert entry in its event's dispatch (its follow column, expanded by
// FindIncident).
type timelineRow struct {
	id, incidentID, at, kind string
	actor                    any
	text, data               string
	follow                   []byte // JSON array, nil when none
}

// Row counts per multi-row statement: a batch of n rows runs as few
// statements of these sizes, each prepared once on the writer. Powers of
// two: a batch runs at most one statement of each size (a group commit of
// 30 events ran 16+4+4+4+1+1 with {64,16,4,1}, now 16+8+4+2), and each
// statement has a fixed cost (callgrind, BenchmarkIngestDistinctGroups:
// -2.4 % instructions per event at batches of 30, -1.8 % at 120).
var flushChunks = []int{64, 32, 16, 8, 4, 2, 1}

// chunk is the largest of flushChunks that n rows or keys fill (n > 0).
func chunk(n int) int {
	for _, c := range flushChunks {
		if c <= n {
			return c
		}
	}
	return 1
}

// addIngestStmts has stmts prepared on the writer with the ingest's
// statements (DB.writerStmts).
func addIngestStmts(stmts ...map[int]string) {
	for _, m := range stmts {
		for _, q := range m {
			ingestStmts = append(ingestStmts, q)
		}
	}
}

const (
	// A new incident is neither acknowledged nor resolved: those columns
	// and its summary keep their defaults (NULL, '') and are not bound.
	flushIncidentHead = `INSERT INTO incidents (id, org_id, project_id, task_id, provider, title, severity, status, alert_count,
	event_count, session_id, opened_at, last_alert_at, created_at, updated_at, open_fingerprints, main_key, main_key_held,
	opened_entry) VALUES `
	flushKeyHead = `INSERT OR IGNORE INTO incident_keys (project_id, key, incident_id) VALUES `
	// The keys of the incidents the batch opened: their incident ids are
	// new, so no row can hold them and a plain INSERT does (on PostgreSQL
	// OR IGNORE is ON CONFLICT DO NOTHING, a speculative insertion: a few
	// µs more per key). addKey writes each key of such an incident once.
	flushNewKeyHead   = `INSERT INTO incident_keys (project_id, key, incident_id) VALUES `
	flushTimelineHead = `INSERT INTO incident_timeline (id, incident_id, at, kind, actor, text, data, follow) VALUES `
	// The group commit's events (InsertWebhookEvents), written at its end
	// with their dispatch outcome: nothing in the transaction reads them
	// before (the batch's duplicates are found in its memory).
	flushEventHead = `INSERT INTO webhook_events (` + webhookEventCols + `, dedupe_key) VALUES `
)

// flushEventCols and flushIncidentCols are the numbers of values of one
// event and one incident row.
const (
	flushEventCols    = 22
	flushIncidentCols = 19
)

// multiRow is head followed by rows tuples of cols placeholders.
func multiRow(head string, cols, rows int) string {
	tuple := "(" + strings.TrimSuffix(strings.Repeat("?,", cols), ",") + ")"
	return head + strings.TrimSuffix(strings.Repeat(tuple+",", rows), ",")
}

// flushStmts are the multi-row statements, by table head and row count.
var flushStmts = func() map[string]map[int]string {
	m := map[string]map[int]string{}
	for head, cols := range map[string]int{flushIncidentHead: flushIncidentCols, flushKeyHead: 3, flushNewKeyHead: 3, flushTimelineHead: 8,
		flushEventHead: flushEventCols} {
		m[head] = map[int]string{}
		for _, n := range flushChunks {
			m[head][n] = multiRow(head, cols, n)
		}
	}
	return m
}()

func init() {
	// Prepared on the writer with the ingest's statements (DB.writerStmts),
	// for the group commit and the dispatcher alike.
	for _, byN := range flushStmts {
		addIngestStmts(byN)
	}
}

// insertRows writes n rows of cols values each (args holds them in order)
// in as few statements as flushChunks allow.
// On SQLite a chunk whose rows share their values in the head's shared
// columns binds those once (webhook_dispatch_shared.go).
func (s *txStmts) insertRows(ctx context.Context, head string, cols int, args []any) error {
	shared := sharedCols[head]
	if s.tx.db.pg {
		shared = nil
	}
	for len(args) > 0 {
		n := chunk(len(args) / cols)
		rows := args[:n*cols]
		args = args[n*cols:]
		if n > 1 && shared != nil {
			q, mask := sharedStmts[head][n], shared
			if maybe := maybeSharedCols[head]; maybe != nil {
				bits, more := moreShared(shared, maybe, cols, rows, s.maskBuf)
				if bits != 0 {
					s.maskBuf = more
					if mq, ok := sharedStmtFor(head, bits, n, more); ok {
						q, mask = mq, more
					}
				}
			}
			if bound, ok := sharedArgs(mask, cols, rows, s.sharedBuf); ok {
				s.sharedBuf = bound[:0]
				if _, err := s.exec(ctx, q, bound...); err != nil {
					return err
				}
				continue
			}
		}
		if _, err := s.exec(ctx, flushStmts[head][n], rows...); err != nil {
			return err
		}
	}
	return nil
}

// ts is TS(t), formatted once per batch for the transaction's time, which
// nearly every row of the batch carries (five times per incident opened).
func (s *txStmts) ts(t time.Time) string {
	if !t.Equal(s.tx.Now) {
		return TS(t)
	}
	if s.now == "" {
		s.now = TS(s.tx.Now)
	}
	return s.now
}

// openIncident registers an incident the batch opened (inserted by flush).
func (s *txStmts) openIncident(inc *Incident) {
	p := &pendingIncident{inc: inc}
	s.pending[inc.ID] = p
	s.pendingOrder = append(s.pendingOrder, p)
}

// counted adds an event's alerts to inc: in memory for an incident the
// batch opened (its INSERT carries them), as a delta written at the end
// for one already stored.
func (s *txStmts) counted(inc *Incident, alerts int) {
	inc.AlertCount += alerts
	inc.EventCount++
	inc.LastAlertAt = s.tx.Now
	if s.pending[inc.ID] != nil {
		return
	}
	d := s.delta(inc.ID)
	d.alerts += alerts
	d.events++
}

// setSession records the first run started for an incident that had none.
func (s *txStmts) setSession(inc *Incident, sessionID string) {
	inc.SessionID = sessionID
	if s.pending[inc.ID] == nil {
		s.delta(inc.ID).sessionID = sessionID
	}
}

// addKey maps a correlation key to inc at the flush. An incident the batch
// opened takes its first key on its own row (main_key) and its others with
// a plain INSERT, each once (the batch's st.open alone does not say whether
// the key was added to it already: another incident may have taken the key
// over since); a stored incident's go in with INSERT OR IGNORE.
func (s *txStmts) addKey(projectID, key string, inc *Incident) {
	p := s.pending[inc.ID]
	if p == nil {
		if s.mainKeys[inc.ID] != key {
			s.keyArgs = append(s.keyArgs, projectID, key, inc.ID)
		}
		return
	}
	if p.mainKey == "" {
		p.mainKey = key
		return
	}
	if key == p.mainKey {
		return
	}
	for _, k := range p.keys {
		if k == key {
			return
		}
	}
	p.keys = append(p.keys, key)
	s.newKeyArgs = append(s.newKeyArgs, projectID, key, inc.ID)
}

// timeline appends an entry to an incident's timeline (at the flush).
func (s *txStmts) timeline(incidentID, kind, actor, text, data string) {
	s.tl = append(s.tl, timelineRow{id: NewID(), incidentID: incidentID, at: s.ts(s.tx.Now), kind: kind,
		actor: nullStr(actor), text: text, data: orJSON(data, "{}")})
}

// alertEntry appends an event's alert entry; the entries its dispatch adds
// to the same incident next (followUp) ride on it. The first entry of an
// incident the batch opened goes on the incident's row (opened_entry).
func (s *txStmts) alertEntry(incidentID, text, data string) {
	if p := s.pending[incidentID]; p != nil && p.entry == nil {
		// Its at, kind and text are the incident's opened_at, "alert"
		// and title: only the id and data are stored.
		p.entry = &timelineRow{id: NewID(), incidentID: incidentID, data: orJSON(data, "{}")}
		s.followTo, s.followRow = p.entry, 0
		return
	}
	s.timeline(incidentID, "alert", "", text, data)
	s.followTo, s.followRow = nil, len(s.tl)
}

// followUp adds a dispatch's entry (run, skip, approval; no actor) to an
// incident's timeline: on the event's alert entry when that is the
// incident's last entry so far, so that reading the entry's follow-ups in
// order after it keeps the timeline's order (at, id); else as a row.
func (s *txStmts) followUp(incidentID, kind, text, data string) {
	r := s.followTo
	if r == nil && s.followRow > 0 {
		r = &s.tl[s.followRow-1]
	}
	if r == nil || r.incidentID != incidentID {
		s.timeline(incidentID, kind, "", text, data)
		return
	}
	if r.follow == nil {
		// Room for a few entries: growing from nothing was most of this.
		r.follow = append(make([]byte, 0, 256), '[')
	} else {
		r.follow[len(r.follow)-1] = ','
	}
	r.follow = append(r.follow, `{"id":"`...)
	r.follow = append(r.follow, NewID()...)
	r.follow = append(r.follow, `","kind":`...)
	r.follow = appendJSONString(r.follow, kind)
	r.follow = append(r.follow, `,"text":`...)
	r.follow = appendJSONString(r.follow, text)
	r.follow = append(r.follow, `,"data":`...)
	r.follow = append(r.follow, orJSON(data, "{}")...)
	r.follow = append(r.follow, "}]"...)
}

// noFollow ends the current event's follow-ups: later entries are rows.
func (s *txStmts) noFollow() { s.followTo, s.followRow = nil, 0 }

// openedEntry is p's opened_entry: {"id":...,"data":...,"follow":[...]}
// ("follow" only when there are follow-ups), NULL when it has no entry.
func (p *pendingIncident) openedEntry() any {
	e := p.entry
	if e == nil {
		return nil
	}
	n := len(`{"id":"","data":,"follow":}`) + len(e.id) + len(e.data) + len(e.follow)
	b := make([]byte, 0, n)
	b = append(b, `{"id":"`...)
	b = append(b, e.id...)
	b = append(b, `","data":`...)
	b = append(b, e.data...)
	if e.follow != nil {
		b = append(b, `,"follow":`...)
		b = append(b, e.follow...)
	}
	return string(append(b, '}'))
}

// flushPending inserts the incidents the batch opened and the buffered
// key and timeline rows.
func (s *txStmts) flushPending(ctx context.Context) error {
	if len(s.pendingOrder) > 0 {
		args := make([]any, 0, flushIncidentCols*len(s.pendingOrder))
		var box rowBoxes
		for _, p := range s.pendingOrder {
			i := p.inc
			args = append(args, i.ID, box.str(boxOrg, i.OrgID), box.str(boxProject, i.ProjectID),
				box.nullStr(boxTask, i.TaskID), box.str(boxProvider, i.Provider), i.Title, box.str(boxSeverity, i.Severity),
				box.str(boxStatus, i.Status), int64(i.AlertCount), int64(i.EventCount), nullStr(i.SessionID),
				box.str(boxNow, s.ts(i.OpenedAt)), box.str(boxNow, s.ts(i.LastAlertAt)), box.str(boxNow, s.ts(i.CreatedAt)),
				box.str(boxNow, s.ts(i.UpdatedAt)), p.openFingerprints())
			// Its main key in memory (webhook_key_memory.go), else in the index.
			if p.mainKey != "" && s.keyMem != nil && s.keyMem.hold(i.ProjectID, p.mainKey, i.ID) {
				args = append(args, nil, p.mainKey, p.openedEntry())
			} else {
				args = append(args, nullStr(p.mainKey), nil, p.openedEntry())
			}
			if s.ending {
				continue // the batch's last flush: nothing joins these after it
			}
			if p.mainKey != "" {
				s.mainKeys[i.ID] = p.mainKey // stored now: addKey skips it
			}
			if len(p.order) > 0 {
				// Flushed before the batch's end (a transition): an event
				// later in the batch that joins it moves them (newAlertsTx).
				s.unmoved[i.ID] = p.order
			}
		}
		if err := s.insertRows(ctx, flushIncidentHead, flushIncidentCols, args); err != nil {
			return err
		}
		clear(s.pending)
		s.pendingOrder = s.pendingOrder[:0]
	}
	if len(s.newKeyArgs) > 0 {
		if err := s.insertRows(ctx, flushNewKeyHead, 3, s.newKeyArgs); err != nil {
			return err
		}
		s.newKeyArgs = s.newKeyArgs[:0]
	}
	if len(s.keyArgs) > 0 {
		if err := s.insertRows(ctx, flushKeyHead, 3, s.keyArgs); err != nil {
			return err
		}
		s.keyArgs = s.keyArgs[:0]
	}
	if len(s.tl) > 0 {
		args := make([]any, 0, 8*len(s.tl))
		for _, r := range s.tl {
			var follow any
			if r.follow != nil {
				follow = string(r.follow)
			}
			args = append(args, r.id, r.incidentID, r.at, r.kind, r.actor, r.text, r.data, follow)
		}
		if err := s.insertRows(ctx, flushTimelineHead, 8, args); err != nil {
			return err
		}
		s.tl = s.tl[:0]
	}
	// The flushed entries take no more follow-ups: the event's next
	// entries are rows (they sort after the ones flushed).
	s.noFollow()
	return nil
}
