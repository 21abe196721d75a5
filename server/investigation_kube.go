package server

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/opsagent/opsagent/server/connector"
	"github.com/opsagent/opsagent/server/investigate"
)

// kubeSource: when an alert names a Kubernetes workload (namespace and
// pod, deployment, statefulset or daemonset labels, as kube-state-metrics
// and the Prometheus operator's rules carry them), the workload's status
// and recent events, read through the project's cluster connector. It asks
// only the cluster the alert's "cluster" label names, or the one cluster
// connector online, and only reads.
type kubeSource struct {
	r *kubeRemote
}

func (kubeSource) Name() string { return "kubernetes" }

// kubeWorkloadLabels are the labels naming a workload, in the order tried.
var kubeWorkloadLabels = []struct{ label, kind string }{
	{"pod", "pods"}, {"deployment", "deployments"}, {"statefulset", "statefulsets"}, {"daemonset", "daemonsets"},
}

func (k kubeSource) Gather(ctx context.Context, q investigate.Query) ([]investigate.Item, error) {
	ns := q.Labels["namespace"]
	if ns == "" {
		return nil, nil
	}
	cluster, err := k.r.Cluster(ctx, q.Labels["cluster"])
	if err != nil && q.Labels["cluster"] != "" {
		cluster, err = k.r.Cluster(ctx, "")
	}
	if err != nil {
		return nil, err
	}
	var items []investigate.Item
	read := func(title string, call connector.KubeCall) error {
		var out bytes.Buffer
		res, err := k.r.Call(ctx, cluster, call, &out)
		if err != nil {
			return err
		}
		if res.Error != "" || res.Refused != "" {
			return fmt.Errorf("%s: %s%s", title, res.Error, res.Refused)
		}
		items = append(items, investigate.Item{Source: "kubernetes", Title: title, Content: strings.TrimSpace(out.String()),
			Origin: "cluster connector " + cluster.Name, At: q.OpenedAt})
		return nil
	}
	for _, w := range kubeWorkloadLabels {
		name := q.Labels[w.label]
		if name == "" {
			continue
		}
		if w.kind == "pods" {
			if err := read("pod "+ns+"/"+name, connector.KubeCall{Op: "describe_pod", Namespace: ns, Name: name}); err != nil {
				return items, err
			}
		} else {
			if err := read(strings.TrimSuffix(w.kind, "s")+" "+ns+"/"+name, connector.KubeCall{Op: "get", Kind: w.kind, Namespace: ns, Name: name}); err != nil {
				return items, err
			}
			if w.kind == "deployments" {
				_ = read("rollout of "+ns+"/"+name, connector.KubeCall{Op: "rollout_status", Kind: w.kind, Namespace: ns, Name: name})
			}
			if err := read("events of "+ns+"/"+name, connector.KubeCall{Op: "list", Kind: "events", Namespace: ns,
				FieldSelector: "involvedObject.name=" + name, Limit: 20}); err != nil {
				return items, err
			}
		}
		break
	}
	return items, nil
}
