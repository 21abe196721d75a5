package store

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
)

// The keys of an incident the batch opened go in with a plain INSERT
// (flushNewKeyHead): the batch must write each such key once, even when
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
	rows, err := db.r.QueryContext(ctx, `SELECT key, incident_id FROM incident_keys WHERE project_id = ?`, hook.ProjectID)
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
	want := "k1=A k1=B k2=B k2=F k3=A k4=A k5=D k6=D k7=D k8=E k9=F long=E"
	if strings.Join(got, " ") != want {
		t.Fatalf("incident_keys:\n got %s\nwant %s", strings.Join(got, " "), want)
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
}
