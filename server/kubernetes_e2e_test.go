package server_test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/internal/testkit"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// secretCanary is a Secret's value that must never leave the cluster.
const secretCanary = "canary-4f9d2c7e-never-shown"

// The Kubernetes connector end to end against a real kube-apiserver (and
// etcd): the real binary serves, `opsagent connector --kubernetes` of the
// same binary connects with a service account token bound to the read-only
// ClusterRole of deploy/kubernetes, and a scripted model calls the
// Kubernetes tools through the agent, with the real policy, approvals and
// event streams in between. No kubelet runs: pods get their status through
// the status subresource, and pod logs come from a loopback server
// speaking the kubelet's log API, to which the apiserver proxies.
func TestKubernetesEndToEnd(t *testing.T) {
	k := testkit.StartKubeCluster(t)
	kubelet := startFakeKubelet(t)
	applyFile(t, k, kubeManifests("base", "namespace.yaml"), "")
	applyFile(t, k, kubeManifests("base", "serviceaccount.yaml"), "")
	applyFile(t, k, kubeManifests("base", "clusterrole-read.yaml"), "")
	k.Must(t, 201, "POST", "/api/v1/namespaces", map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "shop"}})
	k.Must(t, 201, "POST", "/api/v1/namespaces/shop/secrets", map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "db-creds", "namespace": "shop",
			// kubectl apply leaves a copy of the values here: it must not leak either.
			"annotations": map[string]any{"kubectl.kubernetes.io/last-applied-configuration": `{"stringData":{"password":"` + secretCanary + `"}}`}},
		"stringData": map[string]any{"password": secretCanary, "user": "shop"}})
	k.Must(t, 201, "POST", "/apis/apps/v1/namespaces/shop/deployments", deployment("shop", "web", 2))
	seedNode(t, k, "node-1", kubelet.port)
	seedPod(t, k, "shop", "web-7d4b9-abcde", "node-1", map[string]string{"app": "web"}, crashLooping())
	seedPod(t, k, "shop", "web-7d4b9-fghij", "node-1", map[string]string{"app": "web"}, running())
	seedEvent(t, k, "shop", "web-7d4b9-abcde", "BackOff", "Back-off restarting failed container app in pod web-7d4b9-abcde", 42)
	kubelet.logs["shop/web-7d4b9-abcde/app/previous"] = "starting shop web 1.4.2\nconnecting with password " + secretCanary + "\nfatal: out of memory\n"
	kubelet.logs["shop/web-7d4b9-abcde/app"] = "starting shop web 1.4.2\n"

	w := newConnWorld(t)
	c := w.c
	tokA, idA := w.enroll(c, "k8s-a", map[string]string{"env": "prod"})
	saToken := serviceAccountToken(t, k, "opsagent", "opsagent-connector")
	kubeconfig := k.Kubeconfig(t, "prod-east", saToken)
	connA := w.startHost("k8s-a", t.TempDir(), tokA, "--kubernetes", "--kubeconfig", kubeconfig)
	w.waitOnline(c, "k8s-a")

	t.Run("registers as kind kubernetes with the cluster's name, version and read-only verbs", func(t *testing.T) {
		got := c.must(200, "GET", "/api/connectors/"+idA, nil).JSON()
		kube, _ := got["kubernetes"].(map[string]any)
		if got["kind"] != "kubernetes" || kube == nil || kube["cluster"] != "prod-east" || !strings.HasPrefix(fmt.Sprint(kube["version"]), "v1.37") || kube["error"] != nil {
			t.Fatalf("connector: %v\n%s", got, connA.logs.String())
		}
		verbs := fmt.Sprint(kube["verbs"])
		if !strings.Contains(verbs, "pods: get,list,watch") || !strings.Contains(verbs, "deployments: get,list,watch") || strings.Contains(verbs, "patch") {
			t.Fatalf("verbs: %s", verbs)
		}
	})

	chat := func(t *testing.T, turns ...llmfake.Turn) (string, []sseEvent) {
		t.Helper()
		w.fake.Add(append(turns, llmfake.Text("done"))...)
		res, evs := c.stream("POST", "/api/chat", map[string]any{"message": "what is wrong with shop?"}, 0, nil)
		if res.StatusCode != 200 || len(evs) == 0 {
			t.Fatalf("chat: %d %v\n%s", res.StatusCode, types(evs), w.logs.String())
		}
		return res.Header.Get("X-Session-ID"), evs
	}
	call := func(name string, args map[string]any) llmfake.Turn {
		b, _ := json.Marshal(args)
		return llmfake.ToolCall(name, string(b))
	}
	results := func(evs []sseEvent) []map[string]any {
		var out []map[string]any
		for _, e := range evs {
			if e.Type == "tool.result" {
				out = append(out, e.Data)
			}
		}
		return out
	}
	var everything []sseEvent
	var sessions []string

	t.Run("the agent lists failing pods and reads their events and logs", func(t *testing.T) {
		sid, evs := chat(t,
			call("kubernetes_list", map[string]any{"kind": "pods", "namespace": "shop"}),
			call("kubernetes_describe_pod", map[string]any{"namespace": "shop", "name": "web-7d4b9-abcde"}),
			call("kubernetes_list", map[string]any{"kind": "events", "namespace": "shop", "field_selector": "involvedObject.name=web-7d4b9-abcde"}),
			call("kubernetes_logs", map[string]any{"namespace": "shop", "pod": "web-7d4b9-abcde", "previous": true, "tail_lines": 50}))
		everything, sessions = append(everything, evs...), append(sessions, sid)
		rs := results(evs)
		if len(rs) != 4 {
			t.Fatalf("results: %v", rs)
		}
		for _, r := range rs {
			if r["is_error"] != false {
				t.Fatalf("a read failed: %v\n%s", r, connA.logs.String())
			}
		}
		list := rs[0]["output"].(string)
		if !strings.Contains(list, "web-7d4b9-abcde") || !strings.Contains(list, "CrashLoopBackOff") || !strings.Contains(list, "0/1") ||
			!strings.Contains(list, "web-7d4b9-fghij") || !strings.Contains(list, "cluster prod-east") {
			t.Fatalf("pod list: %s", list)
		}
		desc := rs[1]["output"].(string)
		for _, want := range []string{"CrashLoopBackOff", "OOMKilled (exit code 137)", "restarts: 7", "Ready=False", "BackOff", "x42",
			"DB_PASSWORD=<secret db-creds key password: masked>", "MODE=prod"} {
			if !strings.Contains(desc, want) {
				t.Fatalf("describe lacks %q:\n%s", want, desc)
			}
		}
		if ev := rs[2]["output"].(string); !strings.Contains(ev, "Back-off restarting failed container") || !strings.Contains(ev, "pod/web-7d4b9-abcde") {
			t.Fatalf("events: %s", ev)
		}
		logs := rs[3]["output"].(string)
		if !strings.Contains(logs, "fatal: out of memory") || !strings.Contains(logs, "previous container") || !strings.Contains(logs, "[masked secret]") {
			t.Fatalf("logs: %s", logs)
		}
		if i := slices.IndexFunc(kubelet.seen, func(s string) bool {
			return strings.Contains(s, "previous=true") && strings.Contains(s, "tailLines=50")
		}); i < 0 {
			t.Fatalf("the apiserver did not proxy the log call to the kubelet as asked: %v", kubelet.seen)
		}
		// The model read what the tools returned.
		reqs := w.fake.Requests()
		if sent := reqs[len(reqs)-1].Text(); !strings.Contains(sent, "fatal: out of memory") {
			t.Fatalf("the model did not get the log: %s", sent)
		}
	})

	t.Run("an alert naming a pod brings the pod's status and events into the evidence pack", func(t *testing.T) {
		f := newHook(t, w.env, c, map[string]any{"provider": "alertmanager"})
		w.fake.Add(llmfake.Text("The pod is OOM-killed; see the evidence."))
		before := len(w.fake.Requests())
		alert := strings.Replace(string(amAlert("g-kube", "fp-kube", "firing")),
			`"labels":{"alertname":"HighLatency","severity":"critical","service":"api"}`,
			`"labels":{"alertname":"KubePodCrashLooping","severity":"critical","namespace":"shop","pod":"web-7d4b9-abcde"}`, 1)
		if r := f.post(t, []byte(alert), bearer(f.secret)); r.Status != 202 {
			t.Fatalf("alert: %d %s", r.Status, r.Body)
		}
		f.dispatch(t)
		var first string
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) && first == "" {
			if reqs := w.fake.Requests(); len(reqs) > before {
				first = reqs[before].Text()
			}
			time.Sleep(50 * time.Millisecond)
		}
		for _, want := range []string{"## Kubernetes", "pod shop/web-7d4b9-abcde", "OOMKilled (exit code 137)", "restarts: 7", "cluster connector k8s-a"} {
			if !strings.Contains(first, want) {
				t.Fatalf("the investigation's first request lacks %q:\n%s", want, first)
			}
		}
		if strings.Contains(first, secretCanary) {
			t.Fatal("the evidence pack carries the Secret's value")
		}
	})

	t.Run("secrets show names and keys, unknown kinds list the supported ones, big lists page", func(t *testing.T) {
		for i := range 3 {
			seedEvent(t, k, "shop", "web-7d4b9-fghij", "Pulled", fmt.Sprintf("pulled image %d", i), 1)
		}
		sid, evs := chat(t,
			call("kubernetes_get", map[string]any{"kind": "secret", "namespace": "shop", "name": "db-creds"}),
			call("kubernetes_list", map[string]any{"kind": "secrets", "namespace": "shop"}),
			call("kubernetes_list", map[string]any{"kind": "widgets"}),
			call("kubernetes_list", map[string]any{"kind": "events", "namespace": "shop", "limit": 2}))
		everything, sessions = append(everything, evs...), append(sessions, sid)
		rs := results(evs)
		if got := rs[0]["output"].(string); !strings.Contains(got, `"password"`) || !strings.Contains(got, `"user"`) || strings.Contains(got, "stringData") {
			t.Fatalf("secret: %s", got)
		}
		if got := rs[1]["output"].(string); !strings.Contains(got, "db-creds") || !strings.Contains(got, "password,user") {
			t.Fatalf("secret list: %s", got)
		}
		if rs[2]["is_error"] != true || !strings.Contains(rs[2]["output"].(string), "supported kinds are") || !strings.Contains(rs[2]["output"].(string), "deployments") {
			t.Fatalf("unknown kind: %v", rs[2])
		}
		if got := rs[3]["output"].(string); !strings.Contains(got, "page capped at 2") || !strings.Contains(got, "continue=") {
			t.Fatalf("paging: %s", got)
		}
	})

	webPath := "/apis/apps/v1/namespaces/shop/deployments/web"
	approveNext := func(t *testing.T, sid string, evs []sseEvent) ([]sseEvent, map[string]any) {
		t.Helper()
		ar := lastOf(t, evs, "approval.required")
		page := c.must(200, "GET", "/api/approvals?status=pending&kind=tool_call", nil).JSON()
		subj := page["items"].([]any)[0].(map[string]any)["subject"].(map[string]any)
		c.must(200, "POST", "/api/approvals/"+ar.Data["approval_id"].(string)+"/approve", map[string]any{"comment": "go"})
		return w.watch(c, sid, evs[len(evs)-1].ID), subj
	}

	t.Run("without the write Role the cluster refuses, and the model reads its words", func(t *testing.T) {
		sid, evs := chat(t, call("kubernetes_action", map[string]any{"action": "scale", "namespace": "shop", "name": "web", "replicas": 3}))
		more, subj := approveNext(t, sid, evs)
		everything, sessions = append(everything, append(evs, more...)...), append(sessions, sid)
		if subj["target"] != "cluster prod-east (connector k8s-a)" || !strings.Contains(subj["command"].(string), "scale deployment shop/web on cluster prod-east: set spec.replicas from 2 to 3") {
			t.Fatalf("approval card: %v", subj)
		}
		r := lastOf(t, more, "tool.result").Data
		out := r["output"].(string)
		if r["is_error"] != true || !strings.Contains(out, "forbidden") || !strings.Contains(out, `cannot patch resource "deployments"`) ||
			!strings.Contains(out, "system:serviceaccount:opsagent:opsagent-connector") {
			t.Fatalf("refusal: %v", r)
		}
		reqs := w.fake.Requests()
		if sent := reqs[len(reqs)-1].ToolResults(); len(sent) == 0 || !strings.Contains(sent[0].Content, `cannot patch resource "deployments"`) {
			t.Fatalf("the model did not read the cluster's refusal: %+v", sent)
		}
		if got := dig(getObj(t, k, webPath), "spec", "replicas"); got != 2.0 {
			t.Fatalf("replicas changed without RBAC: %v", got)
		}
	})

	applyFile(t, k, kubeManifests("actions", "role-actions.yaml"), "shop")

	t.Run("with the Role and an approval, rollout restart sets the annotation once and scale sets replicas", func(t *testing.T) {
		before := getObj(t, k, webPath)
		gen := dig(before, "metadata", "generation").(float64)
		sid, evs := chat(t, call("kubernetes_action", map[string]any{"action": "restart", "namespace": "shop", "name": "web"}))
		more, subj := approveNext(t, sid, evs)
		everything, sessions = append(everything, append(evs, more...)...), append(sessions, sid)
		if !strings.Contains(subj["command"].(string), "restart deployment shop/web on cluster prod-east: set the pod template annotation kubectl.kubernetes.io/restartedAt") {
			t.Fatalf("approval card: %v", subj)
		}
		r := lastOf(t, more, "tool.result").Data
		if r["is_error"] != false {
			t.Fatalf("restart: %v\n%s", r, connA.logs.String())
		}
		after := getObj(t, k, webPath)
		at, _ := dig(after, "spec", "template", "metadata", "annotations").(map[string]any)["kubectl.kubernetes.io/restartedAt"].(string)
		if _, err := time.Parse(time.RFC3339, at); err != nil || dig(after, "metadata", "generation").(float64) != gen+1 {
			t.Fatalf("restart annotation %q, generation %v (was %v)", at, dig(after, "metadata", "generation"), gen)
		}

		sid, evs = chat(t, call("kubernetes_action", map[string]any{"action": "scale", "namespace": "shop", "name": "web", "replicas": 4}))
		more, _ = approveNext(t, sid, evs)
		everything, sessions = append(everything, append(evs, more...)...), append(sessions, sid)
		if r := lastOf(t, more, "tool.result").Data; r["is_error"] != false || !strings.Contains(r["output"].(string), "from 2 to 4") {
			t.Fatalf("scale: %v", r)
		}
		final := getObj(t, k, webPath)
		if dig(final, "spec", "replicas") != 4.0 || dig(final, "metadata", "generation").(float64) != gen+2 ||
			dig(final, "spec", "template", "metadata", "annotations").(map[string]any)["kubectl.kubernetes.io/restartedAt"] != at {
			t.Fatalf("after scale: %v", dig(final, "spec"))
		}
	})

	t.Run("rollouts and approved actions feed the change feed", func(t *testing.T) {
		web := getObj(t, k, webPath)
		uid := dig(web, "metadata", "uid").(string)
		// The deployment controller's work, done by hand: a new ReplicaSet for revision 2.
		rs := deployment("shop", "web-5c8f7", 4)
		rs["kind"] = "ReplicaSet"
		md := rs["metadata"].(map[string]any)
		md["annotations"] = map[string]any{"deployment.kubernetes.io/revision": "2"}
		md["ownerReferences"] = []any{map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": uid, "controller": true}}
		k.Must(t, 201, "POST", "/apis/apps/v1/namespaces/shop/replicasets", rs)
		var kinds []string
		deadline := time.Now().Add(90 * time.Second)
		for !func() bool {
			page := c.must(200, "GET", "/api/changes?source=kubernetes", nil).JSON()
			kinds = kinds[:0]
			found := false
			for _, it := range page["items"].([]any) {
				m := it.(map[string]any)
				kinds = append(kinds, m["kind"].(string)+": "+m["title"].(string))
				found = found || (m["kind"] == "rollout" && strings.Contains(m["title"].(string), "deployment/web in shop on cluster prod-east (revision 2)") &&
					m["service"] == "web" && m["environment"] == "prod-east")
			}
			return found
		}() {
			if time.Now().After(deadline) {
				t.Fatalf("no rollout in the change feed within 90 s: %v\nserver:\n%s\nconnector:\n%s", kinds, w.logs.String(), connA.logs.String())
			}
			time.Sleep(250 * time.Millisecond)
		}
		joined := strings.Join(kinds, "\n")
		if !strings.Contains(joined, "action: restart deployment shop/web on cluster prod-east") || !strings.Contains(joined, "action: scale deployment shop/web") {
			t.Fatalf("the approved actions are not in the feed:\n%s", joined)
		}
		if strings.Count(joined, "(revision 2)") != 1 {
			t.Fatalf("the rollout is in the feed more than once:\n%s", joined)
		}
	})

	t.Run("a stale approval is refused when the object changed so the change no longer applies", func(t *testing.T) {
		sid, evs := chat(t, call("kubernetes_action", map[string]any{"action": "scale", "namespace": "shop", "name": "web", "replicas": 6}))
		lastOf(t, evs, "approval.required")
		// Someone else scales it while the approval waits.
		code, b := k.DoAs(k.AdminToken, "PATCH", webPath, "application/merge-patch+json", map[string]any{"spec": map[string]any{"replicas": 5}})
		if code != 200 {
			t.Fatalf("%d %s", code, b)
		}
		more, _ := approveNext(t, sid, evs)
		everything, sessions = append(everything, append(evs, more...)...), append(sessions, sid)
		r := lastOf(t, more, "tool.result").Data
		if r["is_error"] != true || !strings.Contains(r["output"].(string), "the approval is stale") {
			t.Fatalf("stale approval: %v", r)
		}
		if dig(getObj(t, k, webPath), "spec", "replicas") != 5.0 {
			t.Fatal("a stale approval changed the replicas")
		}
	})

	t.Run("a cluster connector of project A serves no call of project B", func(t *testing.T) {
		b := w.env.register("other@example.com")
		b.Project = b.must(201, "POST", "/api/projects", map[string]any{"name": "other"}).JSON()["id"].(string)
		tokB, _ := w.enroll(b, "k8s-b", nil)
		w.startHost("k8s-b", t.TempDir(), tokB, "--kubernetes", "--kubeconfig", kubeconfig, "--cluster-name", "prod-west")
		w.waitOnline(b, "k8s-b")
		if got := b.must(404, "GET", "/api/connectors/"+idA, nil); got.Status != 404 {
			t.Fatal("project B reads project A's connector")
		}
		callsA := strings.Count(connA.logs.String(), "cluster call")
		b64, _ := json.Marshal(map[string]any{"target": "k8s-a", "kind": "pods", "namespace": "shop"})
		w.fake.Add(llmfake.ToolCall("kubernetes_list", string(b64)), llmfake.Text("done"))
		res, evs := b.stream("POST", "/api/chat", map[string]any{"message": "pods?"}, 0, nil)
		if res.StatusCode != 200 {
			t.Fatal(res.Status)
		}
		r := lastOf(t, evs, "tool.result").Data
		if r["is_error"] != true || !strings.Contains(r["output"].(string), `no online cluster connector "k8s-a" in this project`) ||
			!strings.Contains(r["output"].(string), "k8s-b") {
			t.Fatalf("project B's call: %v", r)
		}
		if n := strings.Count(connA.logs.String(), "cluster call"); n != callsA {
			t.Fatalf("project A's connector served a call of project B (%d -> %d calls)", callsA, n)
		}
	})

	t.Run("a Secret's value appears in no tool output, event, transcript or log", func(t *testing.T) {
		text := allText(everything)
		for _, sid := range sessions {
			text += string(c.must(200, "GET", "/api/sessions/"+sid+"/transcript", nil).Body)
			_, evs := c.stream("GET", "/api/sessions/"+sid+"/events", nil, 0, func(ev sseEvent) bool { return ev.Type == "done" })
			text += allText(evs)
		}
		for _, r := range w.fake.Requests() {
			text += r.Text()
		}
		for what, s := range map[string]string{"session events and transcripts": text, "server log": w.logs.String(), "connector log": connA.logs.String()} {
			if strings.Contains(s, secretCanary) {
				t.Fatalf("the secret's value is in the %s", what)
			}
		}
		if !strings.Contains(text, "[masked secret]") {
			t.Fatal("the masked log line never reached the session: the check above proves nothing")
		}
	})

	t.Run("a bad token is reported on the Connectors page and by doctor", func(t *testing.T) {
		bad := k.Kubeconfig(t, "prod-bad", "not-a-valid-token")
		tokC, idC := w.enroll(c, "k8s-bad", nil)
		w.startHost("k8s-bad", t.TempDir(), tokC, "--kubernetes", "--kubeconfig", bad)
		w.waitOnline(c, "k8s-bad")
		got := c.must(200, "GET", "/api/connectors/"+idC, nil).JSON()
		if kerr := fmt.Sprint(dig(got, "kubernetes", "error")); got["kind"] != "kubernetes" || !strings.Contains(kerr, "401") || !strings.Contains(kerr, "credentials") {
			t.Fatalf("connector with a bad token: %v", got)
		}
		out, err := exec.Command(w.bin, "doctor", "--offline", "--data-dir", t.TempDir(), "--kubeconfig", bad).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "FAIL  kubernetes") || !strings.Contains(string(out), "401") {
			t.Fatalf("doctor: %v\n%s", err, out)
		}
		out, _ = exec.Command(w.bin, "doctor", "--offline", "--data-dir", t.TempDir(), "--kubeconfig", kubeconfig).CombinedOutput()
		if !strings.Contains(string(out), "ok    kubernetes cluster prod-east") {
			t.Fatalf("doctor with good credentials:\n%s", out)
		}
	})

	t.Run("the manifests apply with a server-side dry run", func(t *testing.T) {
		kubectl := testkit.KubectlBinary(t)
		kc := k.Kubeconfig(t, "admin", k.AdminToken)
		for _, dir := range []string{"base", "actions", "actions-nodes"} {
			out, err := exec.Command(kubectl, "--kubeconfig", kc, "apply", "--dry-run=server", "-k", kubeManifests(dir)).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "(server dry run)") {
				t.Fatalf("%s: %v\n%s", dir, err, out)
			}
		}
	})
}
