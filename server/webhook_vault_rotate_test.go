package server_test

import (
	"bytes"
	"context"
	"fmt"
	"github.com/opsagent/opsagent/store/storetest"
	"sync"
	"testing"

	"github.com/opsagent/opsagent/server/secrets"
)

// TestWebhookSecretsSurviveVaultRotation runs `opsagent vault rotate` (its Go
// entry, on its own store and vault handles) against the data directory of
// a running server while a client keeps rotating a webhook's signing secret.
// Afterwards every webhook still accepts correctly signed deliveries (the
// current secret, and the previous one during its overlap), in this server
// and after a restart, and only the new vault key is left.
func TestWebhookSecretsSurviveVaultRotation(t *testing.T) {
	if storetest.Postgres() {
		t.Skip("the one-step rotation addresses the appliance's file; on PostgreSQL: TestVaultRotateBackupPrintConfigOnPostgres")
	}
	// Not parallel: a keyring reload in the server (vault.Open tidies temp
	// files) can remove the rotate command's in-flight temp file; the less
	// else runs, the rarer that race (reported on issue 18).
	env := newEnv(t)
	owner := env.register("owner@example.com")
	plain := newHook(t, env, owner, map[string]any{"provider": "alertmanager", "dedupe_window_seconds": 0})
	overlap := newHook(t, env, owner, map[string]any{"provider": "generic", "scheme": "hmac_sha256", "dedupe_window_seconds": 0})
	prev := overlap.secret
	overlap.secret = owner.must(200, "POST", "/api/tasks/"+overlap.task+"/webhook/rotate-secret",
		map[string]any{"overlap_seconds": 3600}).JSON()["secret"].(string)
	busy := newHook(t, env, owner, map[string]any{"provider": "alertmanager", "dedupe_window_seconds": 0})
	before, _, err := env.Srv.Secrets().KeyUsage(context.Background())
	if err != nil {
		t.Fatal(err)
	}

	// Secret rotations of one webhook race the vault rotation.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	rotations := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			s := owner.must(200, "POST", "/api/tasks/"+busy.task+"/webhook/rotate-secret", map[string]any{"overlap_seconds": 0}).JSON()["secret"].(string)
			mu.Lock()
			busy.secret, rotations = s, rotations+1
			mu.Unlock()
		}
	}()
	var out, errb bytes.Buffer
	err = secrets.RotateCommand(context.Background(), []string{"rotate", "--data-dir", env.Dir, "--batch", "1"},
		func(string) string { return "" }, &out, &errb)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("rotate: %v; %s", err, errb.String())
	}
	if rotations == 0 {
		t.Fatal("no webhook secret rotation ran during the vault rotation")
	}
	t.Logf("%s(%d webhook secret rotations meanwhile)", out.String(), rotations)

	check := func(e *testEnv, round string) {
		t.Helper()
		for i, f := range []*hookFixture{plain, busy} {
			f.env = e
			if r := f.post(t, amAlert("g", fmt.Sprintf("%s-%d", round, i), "firing"), bearer(f.secret)); r.Status != 202 {
				t.Fatalf("%s: delivery to webhook %d after the vault rotation: %d %s", round, i, r.Status, r.Body)
			}
		}
		overlap.env = e
		body := []byte(`{"event":"deploy","round":"` + round + `"}`)
		for _, s := range []string{overlap.secret, prev} {
			h := map[string][]string{"X-Webhook-Signature": {"sha256=" + hmacSHA256Hex([]byte(s), body)}}
			if r := overlap.post(t, body, h); r.Status != 202 {
				t.Fatalf("%s: signed delivery after the vault rotation: %d %s", round, r.Status, r.Body)
			}
			body = append(body, ' ') // not a dedupe of the first
		}
		keys, counts, err := e.Srv.Secrets().KeyUsage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		// plain, busy and overlap's current and previous secrets.
		if len(keys) != 1 || keys[0] == before[len(before)-1] || len(counts) != 1 || counts[keys[0]] != 4 {
			t.Fatalf("%s: keys %v (before %v), ciphertexts per key %v", round, keys, before, counts)
		}
	}
	check(env, "serving")
	check(env.Restart(), "restarted")
}
