package server_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// The integration test button: a loopback Prometheus is reached at its
// readiness path with the credential from the project's secret; one that
// answers 503 is reported not ok; a disabled one is 409.
func TestIntegrationCheckReachesTheHealthEndpoint(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := env.register("op@example.com")
	withProject(t, env, c)
	var gotPath, gotAuth string
	ready := true
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath, gotAuth = r.URL.Path, r.Header.Get("Authorization")
		if !ready {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("Prometheus Server is Ready."))
	}))
	defer prom.Close()
	c.must(200, "PUT", "/api/secrets/PROM_TOKEN", map[string]any{"value": "prom-bearer-token-1"})
	id := c.must(201, "POST", "/api/integrations", map[string]any{"kind": "prometheus", "name": "main", "base_url": prom.URL,
		"auth_scheme": "bearer", "auth_secret": "PROM_TOKEN"}).JSON()["id"].(string)

	out := c.must(200, "POST", "/api/integrations/"+id+"/test", nil).JSON()
	if out["ok"] != true || out["status"].(float64) != 200 || gotPath != "/-/ready" || gotAuth != "Bearer prom-bearer-token-1" {
		t.Fatalf("check: %v (path %q, auth %q)", out, gotPath, gotAuth)
	}
	ready = false
	if out := c.must(200, "POST", "/api/integrations/"+id+"/test", nil).JSON(); out["ok"] != false || out["status"].(float64) != 503 {
		t.Fatalf("check of a server that is not ready: %v", out)
	}
	c.must(200, "PATCH", "/api/integrations/"+id, map[string]any{"enabled": false})
	c.must(409, "POST", "/api/integrations/"+id+"/test", nil)
}
