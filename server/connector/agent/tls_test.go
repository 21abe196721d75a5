package agent

import (
	"context"
	"encoding/pem"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/opsagent/opsagent/server/connector"
)

// The connector verifies the server's certificate: an unknown CA is
// refused, --ca-file trusts it, and a run command streams its output back.
func TestTLSVerifiedAndCAFileTrusted(t *testing.T) {
	hub := connector.NewHub(connector.Options{})
	defer hub.Close()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer ocn_test" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		hub.Serve(context.Background(), ws, connector.Identity{ConnectorID: "tls", Name: "tls"}, "127.0.0.1")
	}))
	defer srv.Close()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)

	strict, err := httpClient("", false)
	if err != nil {
		t.Fatal(err)
	}
	_, err = session(context.Background(), Config{Server: srv.URL, Token: "ocn_test", Client: strict, Logger: log}, newSeenCalls(8))
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("an unknown CA must be refused: %v", err)
	}
	if _, err := httpClient(filepath.Join(t.TempDir(), "missing.pem"), false); err == nil {
		t.Fatal("a missing --ca-file must be an error")
	}

	trusting, err := httpClient(caFile, false)
	if err != nil {
		t.Fatal(err)
	}
	// A wrong token ends the connector instead of retrying forever.
	if err := Run(context.Background(), Config{Server: srv.URL, Token: "ocn_wrong", Client: trusting, Logger: log}); err != ErrTokenRefused {
		t.Fatalf("wrong token: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_ = Run(ctx, Config{Server: srv.URL, Token: "ocn_test", Client: trusting, Logger: log, WorkDir: t.TempDir()})
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !hub.Status("tls").Online {
		if time.Now().After(deadline) {
			t.Fatal("the connector did not connect with --ca-file")
		}
		time.Sleep(10 * time.Millisecond)
	}
	var out strings.Builder
	res, err := hub.Call(ctx, "tls", connector.Run{Command: "echo over-tls; exit 3", TimeoutMS: 5000, MaxOutput: 1 << 20}, &out)
	if err != nil || res.ExitCode != 3 || out.String() != "over-tls\n" {
		t.Fatalf("call over TLS: %+v %v %q", res, err, out.String())
	}
}
