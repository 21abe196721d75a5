package store

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

// correlationKeysSQL reads a project's correlation keys and their
// incidents: incident_keys rows and the open incidents' main keys, in the
// index or held in memory (migrations 0157, 0162); arguments: the project,
// twice.
const correlationKeysSQL = `SELECT key, incident_id FROM incident_keys WHERE project_id = ?
	UNION ALL SELECT COALESCE(main_key, main_key_held), id FROM incidents WHERE project_id = ?
	AND COALESCE(main_key, main_key_held) IS NOT NULL AND status != 'resolved'`

// An incident the batch opened takes its first key on its row (main_key)
// and its others with a plain INSERT (flushNewKeyHead): the batch must
// write each such key once, even when
// another incident took the key over in between (st.open then no longer
// says the key is the first incident's), when an event repeats a key, and
// once a transition flushed the incident mid-batch (its later keys are a
// stored incident's: INSERT OR IGNORE). Every (key, incident) pair ends up
// stored once, and correlation finds the incidents by each key.
func TestNewIncidentKeysWrittenOnce(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	hook := benchWebhook(t, db)
	n := 0
	event := func(status, transition string, keys ...string) IngestItem {
		n++
		alerts := fmt.Sprintf(`[{"fingerprint":"f%d","status":%q}]`, n, status)
		e := &WebhookEvent{OrgID: hook.OrgID, ProjectID: hook.ProjectID, TaskID: hook.TaskID, Provider: "alertmanager",
			Type: "alertmanager." + status, BodyHash: fmt.Sprintf("%064d", n), Verification: "bearer", Body: []byte("{}"),
			BodySize: 2, Alerts: alerts}
		c := &Correlation{Keys: keys, Window: time.Hour, Title: keys[0], Severity: "warning", AlertCount: 1,
			Fingerprints: []string{fmt.Sprintf("f%d", n)}, Firing: status == "firing", Transition: transition, Alerts: alerts}
		return IngestItem{Event: e, Plan: &DispatchPlan{Correlation: c, NoMatch: true}, HookUpdatedAt: hook.UpdatedAt}
	}
	incOf := func(res []IngestResult, i int) string {
		o := res[i].Dispatched
		if o == nil || len(o.Items) == 0 || o.Items[0].Kind != "incident" {
			t.Fatalf("event %d: %+v", i, o)
		}
		return o.Items[0].ID
	}
	res, err := db.InsertWebhookEvents(ctx, []IngestItem{
		event("firing", "", "k1", "k3"),                       // 0: opens A
		event("firing", "", "k2"),                             // 1: opens B
		event("firing", "", "k2", "k1"),                       // 2: joins B, k1 -> B too
		event("firing", "", "k3", "k1"),                       // 3: joins A, k1 back to A (already A's)
		event("firing", "", "k1", "k1"),                       // 4: joins A, the key twice
		event("firing", "", "k5"),                             // 5: opens D
		event("firing", IncidentAcknowledged, "k5"),           // 6: acknowledges D: flushed mid-batch
		event("firing", "", "k5", "k6"),                       // 7: joins D (stored now), adds k6
		event("firing", "", "k6", "k5", "k7"),                 // 8: joins D, adds k7
		event("firing", "", strings.Repeat("long", 40)),       // 9: opens E
		event("firing", "", "k8", strings.Repeat("long", 40)), // 10: joins E, adds k8
	})
	if err != nil {
		t.Fatal(err)
	}
	a, b, d, e := incOf(res, 0), incOf(res, 1), incOf(res, 5), incOf(res, 9)
	for i, want := range []string{a, b, b, a, a, d, d, d, d, e, e} {
		if got := incOf(res, i); got != want {
			t.Fatalf("event %d joined %s, want %s", i, got, want)
		}
	}
	// A later batch adds keys to stored incidents (INSERT OR IGNORE), one
	// of them one the incident has.
	res2, err := db.InsertWebhookEvents(ctx, []IngestItem{
		event("firing", "", "k3", "k4"), // joins A, adds k4
		event("firing", "", "k4", "k3"), // joins A, nothing new
		event("firing", "", "k9"),       // opens F
		event("firing", "", "k9", "k2"), // joins F, k2 is B's too
	})
	if err != nil {
		t.Fatal(err)
	}
	f := incOf(res2, 2)
	if incOf(res2, 0) != a || incOf(res2, 1) != a || incOf(res2, 3) != f {
		t.Fatalf("second batch: %s %s %s, A %s", incOf(res2, 0), incOf(res2, 1), incOf(res2, 3), a)
	}
	name := map[string]string{a: "A", b: "B", d: "D", e: "E", f: "F"}
	keys := func() string {
		rows, err := db.r.QueryContext(ctx, correlationKeysSQL, hook.ProjectID, hook.ProjectID)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var got []string
		for rows.Next() {
			var k, id string
			if err := rows.Scan(&k, &id); err != nil {
				t.Fatal(err)
			}
			got = append(got, strings.Replace(k, strings.Repeat("long", 40), "long", 1)+"="+name[id])
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		sort.Strings(got)
		return strings.Join(got, " ")
	}
	if got, want := keys(), "k1=A k1=B k2=B k2=F k3=A k4=A k5=D k6=D k7=D k8=E k9=F long=E"; got != want {
		t.Fatalf("correlation keys:\n got %s\nwant %s", got, want)
	}
	// The first key of each is on its row, not in incident_keys.
	var mains, rowsOfMains int
	if err := db.r.QueryRowContext(ctx, `SELECT count(*), (SELECT count(*) FROM incident_keys k JOIN incidents i
		ON i.id = k.incident_id AND COALESCE(i.main_key, i.main_key_held) = k.key) FROM incidents WHERE project_id = ?
		AND COALESCE(main_key, main_key_held) IS NOT NULL`,
		hook.ProjectID).Scan(&mains, &rowsOfMains); err != nil || mains != 5 || rowsOfMains != 0 {
		t.Fatalf("main keys: %d on rows, %d also in incident_keys (%v)", mains, rowsOfMains, err)
	}
	// A third batch finds each incident by each of its keys.
	res3, err := db.InsertWebhookEvents(ctx, []IngestItem{
		event("firing", "", "k7"), event("firing", "", "k8"), event("firing", "", "k6"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if incOf(res3, 0) != d || incOf(res3, 1) != e || incOf(res3, 2) != d {
		t.Fatalf("third batch: %s %s %s", incOf(res3, 0), incOf(res3, 1), incOf(res3, 2))
	}
	// Main keys from a later batch, each alone (the prefetch must see them)
	// and after an acknowledge (still open).
	if _, err := db.TransitionIncident(ctx, hook.OrgID, hook.ProjectID, e, IncidentAcknowledged, "", ""); err != nil {
		t.Fatal(err)
	}
	res4, err := db.InsertWebhookEvents(ctx, []IngestItem{
		event("firing", "", "k9"), event("firing", "", strings.Repeat("long", 40)), event("firing", "", "k5"),
		event("firing", "", "k1"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if incOf(res4, 0) != f || incOf(res4, 1) != e || incOf(res4, 2) != d || (incOf(res4, 3) != a && incOf(res4, 3) != b) {
		t.Fatalf("fourth batch: %s %s %s %s", incOf(res4, 0), incOf(res4, 1), incOf(res4, 2), incOf(res4, 3))
	}
	// Resolved, an incident's keys are gone, the main key too: its next
	// alert opens a new incident; B keeps k2.
	for _, id := range []string{f, d} {
		if _, err := db.TransitionIncident(ctx, hook.OrgID, hook.ProjectID, id, IncidentResolved, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := keys(), "k1=A k1=B k2=B k3=A k4=A k8=E long=E"; got != want {
		t.Fatalf("correlation keys after the resolves:\n got %s\nwant %s", got, want)
	}
	res5, err := db.InsertWebhookEvents(ctx, []IngestItem{
		event("firing", "", "k9"), event("firing", "", "k5"), event("firing", "", "k2"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if g := incOf(res5, 0); g == f || g == d || g == b {
		t.Fatalf("k9 after F's resolve joined %s", g)
	}
	if g := incOf(res5, 1); g == f || g == d || g == incOf(res5, 0) {
		t.Fatalf("k5 after D's resolve joined %s", g)
	}
	if incOf(res5, 2) != b {
		t.Fatalf("k2 joined %s, want B %s", incOf(res5, 2), b)
	}
}

// An opened incident's fingerprints are a set in the order they came,
// whether compared in order (a few) or through a map (more).
func TestPendingFingerprintsAreASet(t *testing.T) {
	p := &pendingIncident{}
	var want []string
	added := 0
	for round := 0; round < 3; round++ {
		for i := 0; i < 20; i++ {
			fp := fmt.Sprintf("fp%d", i*(round+1)%23)
			if p.addFingerprint(fp) {
				added++
				want = append(want, fp)
			}
			if got := p.addFingerprint(fp); got {
				t.Fatalf("%s added twice", fp)
			}
		}
	}
	if !reflect.DeepEqual(p.order, want) || added != len(want) {
		t.Fatalf("order %v, want %v (added %d)", p.order, want, added)
	}
	seen := map[string]bool{}
	for _, fp := range p.order {
		if seen[fp] {
			t.Fatalf("%s listed twice", fp)
		}
		seen[fp] = true
	}
	if len(p.order) <= 8 || p.fps == nil {
		t.Fatalf("%d fingerprints never reached the set", len(p.order))
	}
}
