package store

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestWALFramesByBtree is a measurement, run on request:
//
//	OPSAGENT_WAL_FRAMES=1 go test ./store -run WALFramesByBtree -v
//	OPSAGENT_WAL_FRAMES=1 OPSAGENT_BENCH_PAGE_SIZE=4096 go test ./store -run WALFramesByBtree -v -args -bench.batch 30
//
// It stores BenchmarkIngestDistinctGroups' events (every one opens an
// incident) in 50 group commits of -bench.batch events (64 unless told; ~120
// is a busy writer's, ~30 a 64-connection load's) with no checkpoint in between, then
// reads the -wal file's frame headers and names each frame's page by its
// b-tree (dbstat): which tables and indexes cost WAL frames per commit,
// and how many frames rewrite a page an earlier commit already wrote (the
// right edges of append-only b-trees, their parents, page 1). Every frame
// is two pwrite calls and a checksum in the commit, and a pread plus a
// pwrite in the checkpoint: fewer frames per event is less CPU in both.
func TestWALFramesByBtree(t *testing.T) {
	if os.Getenv("OPSAGENT_WAL_FRAMES") == "" {
		t.Skip("a measurement: set OPSAGENT_WAL_FRAMES=1")
	}
	sqliteOnly(t)
	setCheckpointTunables(t, 1<<40, time.Hour) // the log keeps every frame of the run
	db, path := openTemp(t)
	ctx := context.Background()
	hook := benchWebhook(t, db)
	if err := db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE tasks SET overlap_policy = 'skip' WHERE id = ?`, hook.TaskID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// The next commit writes the log from its start: it holds the ingest only.
	if !db.ckpt.checkpoint("RESTART") {
		t.Fatal("restart checkpoint busy")
	}
	batch := *benchBatch
	events := 50 * batch
	body := strings.Repeat("x", 494)
	for i := 0; i < events; i += batch {
		items := make([]IngestItem, 0, batch)
		for j := i; j < i+batch; j++ {
			id := fmt.Sprintf("run1-0-%d", j)
			alerts := `[{"source":"alertmanager","title":"Disk` + id + `","severity":"warning","status":"firing","fingerprint":"` + id +
				`","group_key":"{}:{alertname=\"Disk` + id + `\"}","labels":{"alertname":"Disk` + id + `","instance":"db-` + id +
				`"},"links":[],"starts_at":"2026-11-23T10:00:00Z","summary":"disk filling"}]`
			e := &WebhookEvent{OrgID: hook.OrgID, ProjectID: hook.ProjectID, TaskID: hook.TaskID, Provider: "alertmanager",
				Type: "alertmanager.firing", BodyHash: fmt.Sprintf("%x", sha256.Sum256([]byte(id))), Verification: "bearer",
				Body: []byte(body), BodySize: len(body), Headers: `{"content-type":"application/json","user-agent":"wrk"}`, Alerts: alerts}
			plan := &DispatchPlan{Targets: []DispatchTarget{{TargetTaskID: hook.TaskID}},
				Correlation: &Correlation{Keys: []string{`group:{}:{alertname="Disk` + id + `"}`}, Window: time.Hour,
					Title: "Disk" + id, Severity: "warning", AlertCount: 1, Fingerprints: []string{id}, Firing: true, Alerts: alerts},
				RenderInput: func() string { return "alert " + alerts }}
			items = append(items, IngestItem{Event: e, Plan: plan, HookUpdatedAt: hook.UpdatedAt, DedupeWindow: time.Minute})
		}
		if _, err := db.InsertWebhookEvents(ctx, items); err != nil {
			t.Fatal(err)
		}
	}
	commits, pageSize := walCommits(t, path+"-wal")
	names := map[uint32]string{}
	rows, err := db.r.QueryContext(ctx, `SELECT pageno, name || ' ' || pagetype FROM dbstat`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var p uint32
		var n string
		if err := rows.Scan(&p, &n); err != nil {
			t.Fatal(err)
		}
		names[p] = n
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	byName, rewritesBy := map[string]int{}, map[string]int{}
	seen := map[uint32]bool{}
	frames, rewrites := 0, 0
	for _, c := range commits {
		for _, p := range c {
			n, ok := names[p]
			if !ok {
				n = "(pointer map or free page)"
			}
			byName[n]++
			frames++
			if seen[p] {
				rewrites++
				rewritesBy[n]++
			}
			seen[p] = true
		}
	}
	if len(commits) != events/batch {
		t.Fatalf("%d commits in the log, want %d", len(commits), events/batch)
	}
	t.Logf("page size %d: %d commits of %d events, %.1f frames per commit (%.3f per event), %d of them (%.0f %%) rewrite a page an earlier commit wrote",
		pageSize, len(commits), batch, float64(frames)/float64(len(commits)), float64(frames)/float64(events), rewrites, 100*float64(rewrites)/float64(frames))
	keys := make([]string, 0, len(byName))
	for k := range byName {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return byName[keys[i]] > byName[keys[j]] })
	for _, k := range keys {
		t.Logf("%7.2f frames per commit (%5.2f rewrites)  %s", float64(byName[k])/float64(len(commits)),
			float64(rewritesBy[k])/float64(len(commits)), k)
	}
}

// walCommits reads a WAL file's frame headers (https://sqlite.org/fileformat2.html#walformat):
// the page numbers of each committed transaction's frames, in order, up to
// the first frame of an older log (other salts).
func walCommits(t *testing.T, walPath string) ([][]uint32, int) {
	t.Helper()
	b, err := os.ReadFile(walPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 32 {
		t.Fatalf("%s: %d bytes, no WAL header", walPath, len(b))
	}
	be := binary.BigEndian
	pageSize := int(be.Uint32(b[8:]))
	salt1, salt2 := be.Uint32(b[16:]), be.Uint32(b[20:])
	var commits [][]uint32
	var cur []uint32
	for off := 32; off+24+pageSize <= len(b); off += 24 + pageSize {
		h := b[off : off+24]
		if be.Uint32(h[8:]) != salt1 || be.Uint32(h[12:]) != salt2 {
			break
		}
		cur = append(cur, be.Uint32(h[0:]))
		if be.Uint32(h[4:]) != 0 { // the database size after a commit: its last frame
			commits = append(commits, cur)
			cur = nil
		}
	}
	return commits, pageSize
}
