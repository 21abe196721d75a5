package server_test

import "testing"

// writeDocsBeforeBackup stores a document and a memory before a backup and
// returns the check that the restored server finds both.
func writeDocsBeforeBackup(t *testing.T, env *testEnv, c *client) func(*testEnv, *client) {
	c.must(201, "POST", "/api/knowledge/documents", map[string]any{"collection": "incidents", "name": "2026/disk-full.md",
		"content": "# Disk full\n\n## Cause\n\nThe xylophone log rotation stopped.\n"})
	c.must(201, "POST", "/api/memories", map[string]any{"key": "log-host", "text": "Logs ship to the quokka cluster."})
	return func(env2 *testEnv, c2 *client) {
		t.Helper()
		if top := firstHit(t, c2, "xylophone"); top["name"] != "2026/disk-full.md" || top["heading"] != "Cause" {
			t.Fatalf("restored document: %v", top)
		}
		if top := firstHit(t, c2, "quokka"); top["collection"] != "memories" {
			t.Fatalf("restored memory: %v", top)
		}
		if c2.must(200, "GET", "/api/memories", nil).JSON()["total"] != float64(1) {
			t.Fatal("restored memories")
		}
	}
}
