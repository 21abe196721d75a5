package server_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/store"
)

// checkCheckpoint fails unless cp is a checkpoint of seq events whose
// Ed25519 signature verifies over its signed text.
func checkCheckpoint(t *testing.T, cp map[string]any, org string, seq float64) {
	t.Helper()
	pub, err1 := base64.StdEncoding.DecodeString(cp["public_key"].(string))
	sig, err2 := base64.StdEncoding.DecodeString(cp["signature"].(string))
	text := cp["signed_text"].(string)
	if err1 != nil || err2 != nil || len(pub) != ed25519.PublicKeySize || !ed25519.Verify(pub, []byte(text), sig) {
		t.Fatalf("checkpoint signature does not verify: %v", cp)
	}
	want := "opsagent-audit-checkpoint/v1\n" + org + "\n" + strconv.FormatFloat(seq, 'f', -1, 64) + "\n" + cp["head_hash"].(string) + "\n"
	if cp["org_id"] != org || cp["seq"] != seq || !strings.HasPrefix(text, want) {
		t.Fatalf("checkpoint: got %v, want org %s at seq %v", cp, org, seq)
	}
}

// Every verify and export publishes a signed checkpoint of the chain head;
// deleting the newest events afterwards (which leaves every remaining link
// intact) makes the next verify fail as truncated.
func TestAuditCheckpointsDetectTruncation(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	owner := env.register("owner@example.com")
	org := orgOf(t, owner)
	withProject(t, env, owner)
	v := owner.must(200, "GET", "/api/audit-logs/verify", nil).JSON()
	if v["ok"] != true || v["checkpoint"] == nil {
		t.Fatalf("verify: %v", v)
	}
	checkCheckpoint(t, v["checkpoint"].(map[string]any), org, v["checked"].(float64))

	owner.must(201, "POST", "/api/api-keys", map[string]any{"name": "ci", "scopes": []string{"*"}})
	owner.must(201, "POST", "/api/api-keys", map[string]any{"name": "cd", "scopes": []string{"*"}})
	exp := owner.must(200, "GET", "/api/audit-logs/export", nil)
	var cp map[string]any
	if err := json.Unmarshal([]byte(exp.Header.Get("X-Audit-Checkpoint")), &cp); err != nil {
		t.Fatalf("export checkpoint header %q: %v", exp.Header.Get("X-Audit-Checkpoint"), err)
	}
	lines := strings.Split(strings.TrimSpace(string(exp.Body)), "\n")
	checkCheckpoint(t, cp, org, float64(len(lines)))
	var last map[string]any
	_ = json.Unmarshal([]byte(lines[len(lines)-1]), &last)
	if cp["head_hash"] != last["hash"] {
		t.Fatalf("checkpoint head %v is not the exported chain's last hash %v", cp["head_hash"], last["hash"])
	}

	// Drop the two newest events: every remaining link still holds.
	err := env.DB.Write(t.Context(), func(tx *store.Tx) error {
		_, err := tx.Exec(`DELETE FROM audit_events WHERE org_id = ? AND seq > ?`, org, int64(cp["seq"].(float64))-2)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	v = owner.must(200, "GET", "/api/audit-logs/verify", nil).JSON()
	if v["ok"] != false || v["broken_reason"] != "truncated" || v["broken_seq"] != cp["seq"] || v["checkpoint"] != nil {
		t.Fatalf("verify after truncating the newest events: %v", v)
	}
}
