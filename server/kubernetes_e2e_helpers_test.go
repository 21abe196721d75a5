package server_test

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/opsagent/opsagent/internal/testkit"
)

// kubeManifests is deploy/kubernetes in the repository.
func kubeManifests(parts ...string) string {
	return filepath.Join(append([]string{testkit.Testdata(), "..", "deploy", "kubernetes"}, parts...)...)
}

// restPaths are the collections the manifests' kinds are created in.
var restPaths = map[string]struct {
	base       string
	namespaced bool
}{
	"Namespace":          {"/api/v1/namespaces", false},
	"ServiceAccount":     {"/api/v1/serviceaccounts", true},
	"Secret":             {"/api/v1/secrets", true},
	"ClusterRole":        {"/apis/rbac.authorization.k8s.io/v1/clusterroles", false},
	"ClusterRoleBinding": {"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", false},
	"Role":               {"/apis/rbac.authorization.k8s.io/v1/roles", true},
	"RoleBinding":        {"/apis/rbac.authorization.k8s.io/v1/rolebindings", true},
	"Deployment":         {"/apis/apps/v1/deployments", true},
}

// collection is where an object of kind goes in namespace ns.
func collection(kind, ns string) string {
	p := restPaths[kind]
	if !p.namespaced {
		return p.base
	}
	parts := strings.SplitN(strings.TrimPrefix(p.base, "/"), "/", 4)
	res := parts[len(parts)-1]
	return "/" + strings.Join(parts[:len(parts)-1], "/") + "/namespaces/" + ns + "/" + res
}

// applyFile creates every object of a manifest file for real, as the
// admin (namespace ns for the objects that name none).
func applyFile(t *testing.T, k *testkit.KubeCluster, file, ns string) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if doc == nil {
			continue
		}
		kind, _ := doc["kind"].(string)
		md, _ := doc["metadata"].(map[string]any)
		on, _ := md["namespace"].(string)
		if on == "" {
			on = ns
			if restPaths[kind].namespaced {
				md["namespace"] = ns
			}
		}
		if _, ok := restPaths[kind]; !ok {
			t.Fatalf("%s: no path for kind %s", file, kind)
		}
		k.Must(t, 201, "POST", collection(kind, on), doc)
	}
}

// serviceAccountToken asks the cluster for a token of a service account
// (the TokenRequest API, as the kubelet does for a pod).
func serviceAccountToken(t *testing.T, k *testkit.KubeCluster, ns, name string) string {
	t.Helper()
	r := k.Must(t, 201, "POST", "/api/v1/namespaces/"+ns+"/serviceaccounts/"+name+"/token",
		map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": map[string]any{"expirationSeconds": 3600}})
	return r["status"].(map[string]any)["token"].(string)
}

// fakeKubelet is a loopback HTTPS server speaking the kubelet's log API
// (GET /containerLogs/{namespace}/{pod}/{container}) as the apiserver
// proxies pods/log to it; no kubelet runs in these tests.
type fakeKubelet struct {
	srv  *httptest.Server
	port int
	logs map[string]string // ns/pod/container[/previous] -> log text
	seen []string          // the requests' paths and queries
}

func startFakeKubelet(t *testing.T) *fakeKubelet {
	f := &fakeKubelet{logs: map[string]string{}}
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.seen = append(f.seen, r.URL.RequestURI())
		rest, ok := strings.CutPrefix(r.URL.Path, "/containerLogs/")
		if !ok {
			http.NotFound(w, r)
			return
		}
		key := rest
		if r.URL.Query().Get("previous") == "true" {
			key += "/previous"
		}
		text, ok := f.logs[key]
		if !ok {
			http.Error(w, "container not found", http.StatusNotFound)
			return
		}
		lines := strings.SplitAfter(strings.TrimSuffix(text, "\n")+"\n", "\n")
		lines = lines[:len(lines)-1]
		if n, err := strconv.Atoi(r.URL.Query().Get("tailLines")); err == nil && n < len(lines) {
			lines = lines[len(lines)-n:]
		}
		_, _ = io.WriteString(w, strings.Join(lines, ""))
	}))
	f.srv.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	f.srv.StartTLS()
	t.Cleanup(f.srv.Close)
	_, port, _ := net.SplitHostPort(f.srv.Listener.Addr().String())
	f.port, _ = strconv.Atoi(port)
	return f
}

// seedNode creates a Ready node whose kubelet is the fake one.
func seedNode(t *testing.T, k *testkit.KubeCluster, name string, kubeletPort int) {
	t.Helper()
	k.Must(t, 201, "POST", "/api/v1/nodes", map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": name}})
	status := map[string]any{"status": map[string]any{
		"addresses":       []any{map[string]any{"type": "InternalIP", "address": "127.0.0.1"}},
		"daemonEndpoints": map[string]any{"kubeletEndpoint": map[string]any{"Port": kubeletPort}},
		"conditions":      []any{map[string]any{"type": "Ready", "status": "True", "reason": "KubeletReady", "lastHeartbeatTime": time.Now().UTC().Format(time.RFC3339)}},
		"nodeInfo":        map[string]any{"kubeletVersion": "v1.37.2"},
	}}
	code, b := k.DoAs(k.AdminToken, "PATCH", "/api/v1/nodes/"+name+"/status", "application/merge-patch+json", status)
	if code != 200 {
		t.Fatalf("node status: %d %s", code, b)
	}
}

// seedPod creates a pod of a deployment on a node and sets its status the
// way a kubelet would (through the status subresource).
func seedPod(t *testing.T, k *testkit.KubeCluster, ns, name, node string, labels map[string]string, status map[string]any) {
	t.Helper()
	pod := map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": name, "namespace": ns, "labels": labels},
		"spec": map[string]any{"nodeName": node, "containers": []any{map[string]any{"name": "app", "image": "shop/web:1.4.2",
			"env": []any{map[string]any{"name": "MODE", "value": "prod"},
				map[string]any{"name": "DB_PASSWORD", "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "db-creds", "key": "password"}}}}}}}}
	k.Must(t, 201, "POST", "/api/v1/namespaces/"+ns+"/pods", pod)
	code, b := k.DoAs(k.AdminToken, "PATCH", "/api/v1/namespaces/"+ns+"/pods/"+name+"/status", "application/merge-patch+json", map[string]any{"status": status})
	if code != 200 {
		t.Fatalf("pod status: %d %s", code, b)
	}
}

// crashLooping is the status a kubelet reports for a container that keeps failing.
func crashLooping() map[string]any {
	now := time.Now().UTC()
	return map[string]any{"phase": "Running", "startTime": now.Add(-time.Hour).Format(time.RFC3339), "podIP": "10.1.0.7",
		"conditions": []any{map[string]any{"type": "Ready", "status": "False", "reason": "ContainersNotReady", "message": "containers with unready status: [app]"}},
		"containerStatuses": []any{map[string]any{"name": "app", "image": "shop/web:1.4.2", "imageID": "", "ready": false, "restartCount": 7,
			"state":     map[string]any{"waiting": map[string]any{"reason": "CrashLoopBackOff", "message": "back-off 5m0s restarting failed container=app"}},
			"lastState": map[string]any{"terminated": map[string]any{"reason": "OOMKilled", "exitCode": 137, "finishedAt": now.Add(-time.Minute).Format(time.RFC3339)}}}}}
}

func running() map[string]any {
	return map[string]any{"phase": "Running", "startTime": time.Now().UTC().Add(-time.Hour).Format(time.RFC3339),
		"conditions": []any{map[string]any{"type": "Ready", "status": "True"}},
		"containerStatuses": []any{map[string]any{"name": "app", "image": "shop/web:1.4.2", "imageID": "", "ready": true, "restartCount": 0,
			"state": map[string]any{"running": map[string]any{"startedAt": time.Now().UTC().Add(-time.Hour).Format(time.RFC3339)}}}}}
}

// seedEvent records an event about a pod, as the kubelet would.
func seedEvent(t *testing.T, k *testkit.KubeCluster, ns, pod, reason, message string, count int) {
	t.Helper()
	now := time.Now().UTC().Format(time.RFC3339)
	k.Must(t, 201, "POST", "/api/v1/namespaces/"+ns+"/events", map[string]any{"apiVersion": "v1", "kind": "Event",
		"metadata":       map[string]any{"name": fmt.Sprintf("%s.%d", pod, time.Now().UnixNano()), "namespace": ns},
		"involvedObject": map[string]any{"kind": "Pod", "namespace": ns, "name": pod, "apiVersion": "v1"},
		"reason":         reason, "message": message, "type": "Warning", "count": count, "firstTimestamp": now, "lastTimestamp": now,
		"source": map[string]any{"component": "kubelet", "host": "node-1"}})
}

// deployment is a Deployment as the tests create it.
func deployment(ns, name string, replicas int) map[string]any {
	labels := map[string]any{"app": name}
	return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{"replicas": replicas, "selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "app", "image": "shop/web:1.4.2",
					"env": []any{map[string]any{"name": "DB_PASSWORD", "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "db-creds", "key": "password"}}}}}}}}}}
}

// getObj reads one object as the admin.
func getObj(t *testing.T, k *testkit.KubeCluster, path string) map[string]any {
	t.Helper()
	return k.Must(t, 200, "GET", path, nil)
}

func dig(m map[string]any, keys ...string) any {
	var cur any = m
	for _, key := range keys {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[key]
	}
	return cur
}

// allText is everything a session left behind, for leak checks.
func allText(evs ...[]sseEvent) string {
	var b strings.Builder
	for _, list := range evs {
		for _, e := range list {
			raw, _ := json.Marshal(e.Data)
			b.Write(raw)
			b.WriteString("\n")
		}
	}
	return b.String()
}
