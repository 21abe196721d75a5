package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/opsagent/opsagent/server/connector"
)

// Actions are the changes the connector makes, each only with a person's
// approval on the server and the cluster's RBAC for its service account.
var Actions = []string{"restart", "scale", "undo", "delete_pod", "cordon", "uncordon"}

// restartKey is the annotation `kubectl rollout restart` sets; changing the
// pod template makes the controller replace every pod.
const restartKey = "kubectl.kubernetes.io/restartedAt"

// Plan is what an action would change, read from the object as it is now:
// the approval card shows it, and act checks the object still matches.
type Plan struct {
	Cluster         string `json:"cluster"`
	Namespace       string `json:"namespace,omitempty"`
	Kind            string `json:"kind"`
	Name            string `json:"name"`
	Action          string `json:"action"`
	Change          string `json:"change"`
	ResourceVersion string `json:"resource_version"`
	// Observed is the field the change depends on, as it is now (the
	// replicas, the restart annotation, the revision, the pod's uid).
	Observed string `json:"observed"`

	patch     any    // the body act sends
	patchType string // its content type; "" for a delete
	path      string
}

func (p *Plan) render() string {
	b, _ := json.Marshal(p)
	return string(b)
}

func (p *Plan) where() string {
	if p.Namespace == "" {
		return p.Kind + " " + p.Name
	}
	return p.Kind + " " + p.Namespace + "/" + p.Name
}

func (e *Executor) plan(ctx context.Context, call connector.KubeCall) (*Plan, error) {
	var allowed []string
	switch call.Action {
	case "restart":
		allowed = []string{"deployments", "statefulsets", "daemonsets"}
	case "scale":
		allowed = []string{"deployments", "statefulsets", "replicasets"}
	case "undo":
		allowed = []string{"deployments"}
	case "delete_pod":
		call.Kind, allowed = "pods", []string{"pods"}
	case "cordon", "uncordon":
		call.Kind, allowed = "nodes", []string{"nodes"}
	default:
		return nil, fmt.Errorf("unknown action %q: the actions are %s", call.Action, strings.Join(Actions, ", "))
	}
	k, err := lookupKind(call.Kind)
	if err != nil {
		return nil, err
	}
	ok := false
	for _, a := range allowed {
		ok = ok || a == k.Name
	}
	if !ok {
		return nil, fmt.Errorf("%s applies to %s, not %s", call.Action, strings.Join(allowed, ", "), k.Name)
	}
	if call.Name == "" {
		return nil, fmt.Errorf("%s needs the name of the %s", call.Action, strings.TrimSuffix(k.Name, "s"))
	}
	ns := ""
	if k.Namespaced {
		ns = e.namespace(call)
	}
	var o obj
	if err := e.c.get(ctx, k.path(ns, call.Name), nil, &o); err != nil {
		return nil, err
	}
	rv := o.str("metadata", "resourceVersion")
	p := &Plan{Cluster: e.c.Cluster(), Namespace: ns, Kind: strings.TrimSuffix(k.Name, "s"), Name: o.name(), Action: call.Action,
		ResourceVersion: rv, path: k.path(ns, o.name()), patchType: "application/merge-patch+json"}
	meta := map[string]any{"resourceVersion": rv} // the cluster refuses the patch if the object moved on meanwhile
	switch call.Action {
	case "restart":
		p.Observed = orNone(o.strMap("spec", "template", "metadata", "annotations")[restartKey])
		p.Change = fmt.Sprintf("set the pod template annotation %s to the time of the run (now: %s), so the controller replaces every pod", restartKey, p.Observed)
		p.patch = map[string]any{"metadata": meta, "spec": map[string]any{"template": map[string]any{"metadata": map[string]any{
			"annotations": map[string]any{restartKey: e.Now().UTC().Format("2006-01-02T15:04:05Z")}}}}}
	case "scale":
		if call.Replicas == nil || *call.Replicas < 0 || *call.Replicas > 1000 {
			return nil, errors.New("scale needs replicas between 0 and 1000")
		}
		cur := o.num("spec", "replicas")
		if _, set := o.path("spec", "replicas").(float64); !set {
			cur = 1
		}
		p.Observed = strconv.FormatInt(cur, 10)
		if cur == int64(*call.Replicas) {
			return nil, fmt.Errorf("%s already has %d replicas: nothing to change", p.where(), cur)
		}
		p.Change = fmt.Sprintf("set spec.replicas from %d to %d", cur, *call.Replicas)
		p.patch = map[string]any{"metadata": meta, "spec": map[string]any{"replicas": *call.Replicas}}
	case "undo":
		cur := o.strMap("metadata", "annotations")[revisionKey]
		p.Observed = orNone(cur)
		revs, err := e.revisions(ctx, k, o, ns)
		if err != nil {
			return nil, err
		}
		curN, _ := strconv.ParseInt(cur, 10, 64)
		var to *revision
		for i := range revs {
			r := &revs[i]
			if (call.ToRevision > 0 && r.Number == int64(call.ToRevision)) || (call.ToRevision == 0 && r.Number < curN) {
				to = r
			}
		}
		if to == nil || to.Template == nil {
			return nil, fmt.Errorf("%s has no revision to roll back to (current revision %s; rollout_history lists them)", p.where(), p.Observed)
		}
		if to.Number == curN {
			return nil, fmt.Errorf("%s already runs revision %d", p.where(), curN)
		}
		tmpl, _ := json.Marshal(to.Template)
		var t obj
		_ = json.Unmarshal(tmpl, &t)
		if labels, ok := t.path("metadata", "labels").(map[string]any); ok {
			delete(labels, "pod-template-hash")
		}
		p.Change = fmt.Sprintf("roll the pod template back from revision %s to revision %d (replicaset %s, images %s)", p.Observed, to.Number, to.Name, strings.Join(to.Images, ","))
		p.patchType = "application/json-patch+json"
		p.patch = []map[string]any{{"op": "test", "path": "/metadata/resourceVersion", "value": rv},
			{"op": "replace", "path": "/spec/template", "value": map[string]any(t)}}
	case "delete_pod":
		p.Observed = o.str("metadata", "uid")
		owner := "it has no controller, so it will not come back"
		if ow := o.list("metadata", "ownerReferences"); len(ow) > 0 {
			owner = fmt.Sprintf("its controller %s/%s creates a replacement", strings.ToLower(ow[0].str("kind")), ow[0].str("name"))
		}
		p.Change = fmt.Sprintf("delete the pod (uid %s); %s", p.Observed, owner)
		p.patchType = ""
		p.patch = map[string]any{"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": map[string]any{"uid": p.Observed, "resourceVersion": rv}}
	case "cordon", "uncordon":
		cur, _ := o.path("spec", "unschedulable").(bool)
		want := call.Action == "cordon"
		p.Observed = strconv.FormatBool(cur)
		if cur == want {
			return nil, fmt.Errorf("node %s is already %sed", p.Name, call.Action)
		}
		p.Change = fmt.Sprintf("set spec.unschedulable from %t to %t", cur, want)
		if want {
			p.Change += " (running pods stay; no new pod is scheduled there)"
		}
		p.patch = map[string]any{"metadata": meta, "spec": map[string]any{"unschedulable": want}}
	}
	return p, nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// act makes an approved change, but only while it still means what the
// person approved: if the object changed since (another resourceVersion)
// and the field the change depends on is no longer what they saw, it is
// refused. A change in between this read and the write is refused by the
// cluster itself (the write carries the resourceVersion just read).
func (e *Executor) act(ctx context.Context, call connector.KubeCall, b *strings.Builder) error {
	if call.Expect == nil {
		return errors.New("an action runs only with the state a person approved")
	}
	p, err := e.plan(ctx, call)
	if err != nil {
		return err
	}
	if p.ResourceVersion != call.Expect.ResourceVersion && p.Observed != call.Expect.Observed {
		return fmt.Errorf("the approval is stale: %s changed since it was approved (resourceVersion %s, now %s; it was %s, now %s), "+
			"so the approved change no longer applies and was not made; ask again", p.where(),
			call.Expect.ResourceVersion, p.ResourceVersion, call.Expect.Observed, p.Observed)
	}
	method := "PATCH"
	if p.patchType == "" {
		method = "DELETE"
	}
	var after obj
	if err := e.c.do(ctx, method, p.path, nil, p.patchType, p.patch, &after); err != nil {
		return err
	}
	fmt.Fprintf(b, "%s %s on cluster %s: %s", call.Action, p.where(), p.Cluster, p.Change)
	if rv := after.str("metadata", "resourceVersion"); rv != "" && method == "PATCH" {
		fmt.Fprintf(b, " (done; resourceVersion %s -> %s)", p.ResourceVersion, rv)
	} else {
		b.WriteString(" (done)")
	}
	b.WriteString("\n")
	return nil
}
