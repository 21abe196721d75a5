package kube

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/opsagent/opsagent/server/connector"
)

// workload finds a deployment, statefulset or daemonset.
func (e *Executor) workload(ctx context.Context, call connector.KubeCall, allowed ...string) (kind, obj, string, error) {
	k, err := lookupKind(call.Kind)
	if err != nil {
		return kind{}, nil, "", err
	}
	ok := false
	for _, a := range allowed {
		ok = ok || k.Name == a
	}
	if !ok {
		return kind{}, nil, "", fmt.Errorf("%s is not supported here: the kinds are %s", k.Name, strings.Join(allowed, ", "))
	}
	if call.Name == "" {
		return kind{}, nil, "", fmt.Errorf("name the %s", strings.TrimSuffix(k.Name, "s"))
	}
	ns := e.namespace(call)
	var o obj
	if err := e.c.get(ctx, k.path(ns, call.Name), nil, &o); err != nil {
		return kind{}, nil, "", err
	}
	return k, o, ns, nil
}

func (e *Executor) rolloutStatus(ctx context.Context, call connector.KubeCall, b *strings.Builder) error {
	k, o, ns, err := e.workload(ctx, call, "deployments", "statefulsets", "daemonsets")
	if err != nil {
		return err
	}
	single := strings.TrimSuffix(k.Name, "s")
	gen, observed := o.num("metadata", "generation"), o.num("status", "observedGeneration")
	fmt.Fprintf(b, "%s %s/%s (cluster %s), generation %d, observed %d\n", single, ns, o.name(), e.c.Cluster(), gen, observed)
	if observed < gen {
		fmt.Fprintf(b, "Waiting for the %s spec update to be observed by its controller\n", single)
	}
	switch k.Name {
	case "deployments":
		want, updated, avail := o.num("spec", "replicas"), o.num("status", "updatedReplicas"), o.num("status", "availableReplicas")
		total := o.num("status", "replicas")
		switch {
		case updated < want:
			fmt.Fprintf(b, "Waiting for rollout to finish: %d out of %d new replicas have been updated\n", updated, want)
		case total > updated:
			fmt.Fprintf(b, "Waiting for rollout to finish: %d old replicas are pending termination\n", total-updated)
		case avail < updated:
			fmt.Fprintf(b, "Waiting for rollout to finish: %d of %d updated replicas are available\n", avail, updated)
		case observed >= gen:
			b.WriteString("successfully rolled out\n")
		}
	case "statefulsets":
		want, ready, updated := o.num("spec", "replicas"), o.num("status", "readyReplicas"), o.num("status", "updatedReplicas")
		fmt.Fprintf(b, "replicas %d, ready %d, updated %d, current revision %s, update revision %s\n", want, ready, updated,
			orDash(o.str("status", "currentRevision")), orDash(o.str("status", "updateRevision")))
	case "daemonsets":
		fmt.Fprintf(b, "desired %d, updated %d, available %d\n", o.num("status", "desiredNumberScheduled"),
			o.num("status", "updatedNumberScheduled"), o.num("status", "numberAvailable"))
	}
	for _, c := range o.list("status", "conditions") {
		fmt.Fprintf(b, "condition %s=%s %s %s\n", c.str("type"), c.str("status"), c.str("reason"), oneLine(c.str("message")))
	}
	return nil
}

// revisionKey is where the deployment controller numbers revisions.
const revisionKey = "deployment.kubernetes.io/revision"

// revision is one rollout revision: a ReplicaSet of a deployment, or a
// ControllerRevision of a statefulset or daemonset.
type revision struct {
	Number   int64
	Name     string
	Images   []string
	Cause    string
	Created  string
	Template any // the pod template it ran (deployments)
}

func (e *Executor) revisions(ctx context.Context, k kind, o obj, ns string) ([]revision, error) {
	uid := o.str("metadata", "uid")
	owned := func(x obj) bool {
		for _, ow := range x.list("metadata", "ownerReferences") {
			if ow.str("uid") == uid {
				return true
			}
		}
		return false
	}
	var out []revision
	if k.Name == "deployments" {
		rk, _ := lookupKind("replicasets")
		var page struct {
			Items []obj `json:"items"`
		}
		if err := e.c.get(ctx, rk.path(ns, ""), url.Values{"limit": {"500"}}, &page); err != nil {
			return nil, err
		}
		for _, rs := range page.Items {
			if !owned(rs) {
				continue
			}
			n, _ := strconv.ParseInt(rs.strMap("metadata", "annotations")[revisionKey], 10, 64)
			r := revision{Number: n, Name: rs.name(), Cause: rs.strMap("metadata", "annotations")["kubernetes.io/change-cause"],
				Created: rs.str("metadata", "creationTimestamp"), Template: rs.path("spec", "template")}
			for _, c := range rs.list("spec", "template", "spec", "containers") {
				r.Images = append(r.Images, c.str("image"))
			}
			out = append(out, r)
		}
	} else {
		var page struct {
			Items []obj `json:"items"`
		}
		if err := e.c.get(ctx, "/apis/apps/v1/namespaces/"+url.PathEscape(ns)+"/controllerrevisions", url.Values{"limit": {"500"}}, &page); err != nil {
			return nil, err
		}
		for _, cr := range page.Items {
			if owned(cr) {
				out = append(out, revision{Number: cr.num("revision"), Name: cr.name(), Created: cr.str("metadata", "creationTimestamp"),
					Cause: cr.strMap("metadata", "annotations")["kubernetes.io/change-cause"]})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out, nil
}

func (e *Executor) rolloutHistory(ctx context.Context, call connector.KubeCall, b *strings.Builder) error {
	k, o, ns, err := e.workload(ctx, call, "deployments", "statefulsets", "daemonsets")
	if err != nil {
		return err
	}
	revs, err := e.revisions(ctx, k, o, ns)
	if err != nil {
		return err
	}
	fmt.Fprintf(b, "rollout history of %s %s/%s (cluster %s)", strings.TrimSuffix(k.Name, "s"), ns, o.name(), e.c.Cluster())
	if cur := o.strMap("metadata", "annotations")[revisionKey]; cur != "" {
		fmt.Fprintf(b, ", current revision %s", cur)
	}
	b.WriteString("\n")
	if len(revs) == 0 {
		b.WriteString("no revisions recorded (the controller has not rolled it out yet)\n")
		return nil
	}
	rows := make([][]string, 0, len(revs))
	for _, r := range revs {
		rows = append(rows, []string{strconv.FormatInt(r.Number, 10), r.Name, strings.Join(r.Images, ","), orDash(r.Cause), r.Created})
	}
	b.WriteString(table([]string{"REVISION", "NAME", "IMAGES", "CHANGE-CAUSE", "CREATED"}, rows))
	return nil
}

func (e *Executor) top(ctx context.Context, call connector.KubeCall, b *strings.Builder) error {
	path := "/apis/metrics.k8s.io/v1beta1/nodes"
	what := "nodes"
	switch strings.ToLower(call.Kind) {
	case "nodes", "node", "":
	case "pods", "pod":
		what = "pods"
		path = "/apis/metrics.k8s.io/v1beta1/pods"
		if call.Namespace != "" {
			path = "/apis/metrics.k8s.io/v1beta1/namespaces/" + url.PathEscape(call.Namespace) + "/pods"
		}
	default:
		return fmt.Errorf("top reads nodes or pods, not %q", call.Kind)
	}
	q := url.Values{"limit": {strconv.Itoa(MaxLimit)}}
	if call.LabelSelector != "" {
		q.Set("labelSelector", call.LabelSelector)
	}
	var page struct {
		Items []obj `json:"items"`
	}
	if err := e.c.get(ctx, path, q, &page); err != nil {
		if IsStatus(err, 404) || IsStatus(err, 503) {
			return fmt.Errorf("resource usage is not available: metrics-server is not installed or not ready in this cluster (%v)", err)
		}
		return err
	}
	var rows [][]string
	for _, it := range page.Items {
		if what == "nodes" {
			rows = append(rows, []string{it.name(), it.str("usage", "cpu"), it.str("usage", "memory")})
			continue
		}
		for _, c := range it.list("containers") {
			rows = append(rows, []string{it.namespace(), it.name(), c.str("name"), c.str("usage", "cpu"), c.str("usage", "memory")})
		}
	}
	if what == "nodes" {
		b.WriteString(table([]string{"NODE", "CPU", "MEMORY"}, rows))
	} else {
		b.WriteString(table([]string{"NAMESPACE", "POD", "CONTAINER", "CPU", "MEMORY"}, rows))
	}
	return nil
}
