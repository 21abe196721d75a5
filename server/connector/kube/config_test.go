package kube

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeKubeconfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const twoContexts = `apiVersion: v1
kind: Config
current-context: prod
clusters:
- name: prod-east
  cluster: {server: "https://10.0.0.1:6443", insecure-skip-tls-verify: true}
- name: staging
  cluster: {server: "https://10.0.0.2:6443"}
contexts:
- name: prod
  context: {cluster: prod-east, user: sa, namespace: shop}
- name: stage
  context: {cluster: staging, user: plugin}
users:
- name: sa
  user: {tokenFile: token}
- name: plugin
  user:
    exec: {command: aws, args: [eks, get-token]}
`

func TestLoadKubeconfigReadsTheCurrentContextAndRefusesPlugins(t *testing.T) {
	p := writeKubeconfig(t, twoContexts)
	if err := os.WriteFile(filepath.Join(filepath.Dir(p), "token"), []byte("tok-123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadKubeconfig(p, "")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := cfg.bearer()
	if cfg.Server != "https://10.0.0.1:6443" || cfg.Cluster != "prod-east" || cfg.Namespace != "shop" || err != nil || tok != "tok-123" || !cfg.TLS.InsecureSkipVerify {
		t.Fatalf("config: %+v token %q %v", cfg, tok, err)
	}
	if _, err := LoadKubeconfig(p, "stage"); err == nil || !strings.Contains(err.Error(), "exec or auth-provider plugin") {
		t.Fatalf("an exec plugin must be refused with a reason: %v", err)
	}
	for ctx, want := range map[string]string{"nope": `has no context "nope"`} {
		if _, err := LoadKubeconfig(p, ctx); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("context %s: %v", ctx, err)
		}
	}
	if _, err := LoadKubeconfig(writeKubeconfig(t, "clusters: [\n"), ""); err == nil || !strings.Contains(err.Error(), "not valid YAML") {
		t.Fatalf("bad YAML: %v", err)
	}
	if _, err := LoadKubeconfig(filepath.Join(t.TempDir(), "missing"), ""); err == nil {
		t.Fatal("a missing file loads")
	}
}

func TestUnknownKindListsTheSupportedOnes(t *testing.T) {
	for _, name := range []string{"pods", "Deploy", "hpa", "pvc", "sts", "ingress"} {
		if err := CheckKind(name); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	err := CheckKind("widgets")
	if err == nil || !strings.Contains(err.Error(), "supported kinds are") || !strings.Contains(err.Error(), "horizontalpodautoscalers") {
		t.Fatalf("unknown kind: %v", err)
	}
}

func TestSecretsKeepKeysNeverValues(t *testing.T) {
	k, _ := lookupKind("secrets")
	o := obj{"metadata": map[string]any{"name": "db", "namespace": "shop", "annotations": map[string]any{lastAppliedKey: `{"data":{"p":"c2VjcmV0"}}`}},
		"data": map[string]any{"password": "c2VjcmV0LXZhbHVl"}, "stringData": map[string]any{"user": "admin-user"}, "type": "Opaque"}
	vals := secretValues(o)
	text := pretty(scrub(k, o))
	if strings.Contains(text, "c2VjcmV0") || strings.Contains(text, "secret-value") || strings.Contains(text, "admin-user") || !strings.Contains(text, `"password"`) {
		t.Fatalf("scrubbed secret: %s", text)
	}
	e := &Executor{secrets: map[string]struct{}{}}
	e.remember(vals)
	if got := e.mask("login admin-user with secret-value"); got != "login [masked secret] with [masked secret]" {
		t.Fatalf("mask: %q", got)
	}
}
