package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/opsagent/opsagent/server/connector"
)

// Change is one thing that changed in the cluster, for the server's
// change feed: a rollout (a new ReplicaSet of a deployment, a new
// ControllerRevision of a statefulset or daemonset) or a scaling event.
type Change struct {
	Kind      string            `json:"kind"` // rollout or scale
	Title     string            `json:"title"`
	Namespace string            `json:"namespace"`
	Workload  string            `json:"workload"` // e.g. deployment/web
	Detail    string            `json:"detail"`
	At        time.Time         `json:"at"`
	UID       string            `json:"uid"` // the object's or event's uid: the feed's identity of the change
	Labels    map[string]string `json:"labels,omitempty"`
}

// scaleReasons are the events that say a workload's size changed.
var scaleReasons = map[string]bool{"ScalingReplicaSet": true, "SuccessfulRescale": true}

// changes lists what changed since SinceSeconds ago (op "changes").
func (e *Executor) changes(ctx context.Context, call connector.KubeCall, b *strings.Builder) error {
	since := e.Now().Add(-time.Duration(max(call.SinceSeconds, 1)) * time.Second)
	var out []Change
	add := func(c Change) {
		if !c.At.Before(since) && len(out) < 1000 {
			c.Labels = map[string]string{"cluster": e.c.Cluster(), "namespace": c.Namespace}
			out = append(out, c)
		}
	}
	var page struct {
		Items []obj `json:"items"`
	}
	rk, _ := lookupKind("replicasets")
	if err := e.c.get(ctx, rk.path("", ""), url.Values{"limit": {"500"}}, &page); err != nil {
		return err
	}
	for _, rs := range page.Items {
		owner := rs.list("metadata", "ownerReferences")
		if len(owner) == 0 || owner[0].str("kind") != "Deployment" {
			continue
		}
		at, _ := time.Parse(time.RFC3339, rs.str("metadata", "creationTimestamp"))
		rev := rs.strMap("metadata", "annotations")[revisionKey]
		var images []string
		for _, c := range rs.list("spec", "template", "spec", "containers") {
			images = append(images, c.str("image"))
		}
		w := "deployment/" + owner[0].str("name")
		add(Change{Kind: "rollout", Namespace: rs.namespace(), Workload: w, At: at, UID: rs.str("metadata", "uid"),
			Title:  fmt.Sprintf("rollout of %s in %s on cluster %s (revision %s)", w, rs.namespace(), e.c.Cluster(), orDash(rev)),
			Detail: fmt.Sprintf("new replicaset %s, images %s", rs.name(), strings.Join(images, ", "))})
	}
	page.Items = nil
	if err := e.c.get(ctx, "/apis/apps/v1/controllerrevisions", url.Values{"limit": {"500"}}, &page); err == nil {
		for _, cr := range page.Items {
			owner := cr.list("metadata", "ownerReferences")
			if len(owner) == 0 {
				continue
			}
			at, _ := time.Parse(time.RFC3339, cr.str("metadata", "creationTimestamp"))
			w := strings.ToLower(owner[0].str("kind")) + "/" + owner[0].str("name")
			add(Change{Kind: "rollout", Namespace: cr.namespace(), Workload: w, At: at, UID: cr.str("metadata", "uid"),
				Title:  fmt.Sprintf("rollout of %s in %s on cluster %s (revision %d)", w, cr.namespace(), e.c.Cluster(), cr.num("revision")),
				Detail: "new controllerrevision " + cr.name()})
		}
	}
	page.Items = nil
	ek, _ := lookupKind("events")
	if err := e.c.get(ctx, ek.path("", ""), url.Values{"limit": {"500"}, "fieldSelector": {"type=Normal"}}, &page); err == nil {
		for _, ev := range page.Items {
			if !scaleReasons[ev.str("reason")] {
				continue
			}
			at, _ := time.Parse(time.RFC3339, eventTime(ev))
			w := strings.ToLower(ev.str("involvedObject", "kind")) + "/" + ev.str("involvedObject", "name")
			add(Change{Kind: "scale", Namespace: ev.namespace(), Workload: w, At: at, UID: ev.str("metadata", "uid"),
				Title:  fmt.Sprintf("%s in %s on cluster %s: %s", w, ev.namespace(), e.c.Cluster(), oneLine(ev.str("message"))),
				Detail: ev.str("reason") + ": " + oneLine(ev.str("message"))})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	raw, _ := json.Marshal(out)
	b.Write(raw)
	return nil
}

// WorkloadName is the name part of "deployment/web".
func WorkloadName(w string) string {
	_, n, ok := strings.Cut(w, "/")
	if !ok {
		return w
	}
	return n
}
