package server

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/runner"
	"github.com/opsagent/opsagent/server/connector"
	"github.com/opsagent/opsagent/server/tools"
)

// Cluster connectors (`opsagent connector --kubernetes`) are connectors
// whose hello says kind "kubernetes". A run gets the Kubernetes tools when
// its project has one online; every call resolves within the run's own
// project, so another project's cluster is never reached (and not named).

// kubeRemote is one run's view of its project's cluster connectors.
type kubeRemote struct {
	s                *Server
	orgID, projectID string
}

// kubeCallTimeout bounds one cluster call (a log read, a list page).
const kubeCallTimeout = 60 * time.Second

// onlineClusters are the project's live cluster connectors.
func (r *kubeRemote) onlineClusters(ctx context.Context) ([]tools.KubeCluster, []map[string]string, error) {
	xs, err := r.s.db.FindConnectors(ctx, r.orgID, r.projectID)
	if err != nil {
		return nil, nil, err
	}
	var out []tools.KubeCluster
	var labels []map[string]string
	for i := range xs {
		x := &xs[i]
		st := r.s.connectors.Status(x.ID)
		if x.RevokedAt != nil || !st.Online || st.Hello.Kind != connector.KindKubernetes {
			continue
		}
		c := tools.KubeCluster{ID: x.ID, Name: x.Name}
		if k := st.Hello.Kubernetes; k != nil {
			c.Cluster = k.Cluster
		}
		out = append(out, c)
		labels = append(labels, effectiveLabels(st.Hello.Labels, x.Labels))
	}
	return out, labels, nil
}

// Cluster implements tools.KubeRemote.
func (r *kubeRemote) Cluster(ctx context.Context, target string) (tools.KubeCluster, error) {
	all, labels, err := r.onlineClusters(ctx)
	if err != nil {
		return tools.KubeCluster{}, fmt.Errorf("the project's connectors could not be read; nothing was asked of any cluster")
	}
	names := make([]string, len(all))
	for i, c := range all {
		names[i] = c.Name
	}
	sort.Strings(names)
	known := "no cluster connector is online in this project"
	if len(names) > 0 {
		known = "online cluster connectors: " + strings.Join(names, ", ")
	}
	var picked []tools.KubeCluster
	sel, isSel := parseSelector(target)
	for i, c := range all {
		switch {
		case target == "":
			picked = append(picked, c)
		case isSel && selectorMatches(sel, labels[i]):
			picked = append(picked, c)
		case !isSel && c.Name == target:
			picked = append(picked, c)
		}
	}
	switch {
	case len(picked) == 1:
		return picked[0], nil
	case len(picked) == 0 && target == "":
		return tools.KubeCluster{}, fmt.Errorf("%s; enroll one with `opsagent connector --kubernetes`", known)
	case len(picked) == 0:
		return tools.KubeCluster{}, fmt.Errorf("no online cluster connector %q in this project (%s)", target, known)
	}
	pn := make([]string, len(picked))
	for i, c := range picked {
		pn[i] = c.Name
	}
	return tools.KubeCluster{}, fmt.Errorf("the target %q names %d clusters (%s): a call goes to one; give its connector name", target, len(picked), strings.Join(pn, ", "))
}

// Call implements tools.KubeRemote.
func (r *kubeRemote) Call(ctx context.Context, c tools.KubeCluster, call connector.KubeCall, out io.Writer) (tools.RemoteResult, error) {
	res, err := r.s.connectors.Call(ctx, c.ID, connector.Run{Kube: &call, TimeoutMS: kubeCallTimeout.Milliseconds(), MaxOutput: 4 << 20}, out)
	if err == connector.ErrOffline {
		return tools.RemoteResult{}, fmt.Errorf("the cluster connector %q went offline before the call was sent; nothing was asked", c.Name)
	}
	if err != nil {
		return tools.RemoteResult{}, err
	}
	return tools.RemoteResult{ExitCode: res.ExitCode, Duration: time.Duration(res.DurationMS) * time.Millisecond,
		TimedOut: res.TimedOut, Refused: res.Refused, Error: res.Error, Truncated: res.Truncated}, nil
}

// kubernetesTools are the cluster tools of a run, when its project has a
// cluster connector online.
func (s *Server) kubernetesTools(ctx context.Context, run runner.RunInfo) []agent.Tool {
	r := &kubeRemote{s: s, orgID: run.OrgID, projectID: run.ProjectID}
	clusters, _, err := r.onlineClusters(ctx)
	if err != nil || len(clusters) == 0 {
		return nil
	}
	var out []agent.Tool
	for _, t := range tools.KubernetesTools(r) {
		t.Changed = s.kubeActionChange(run.OrgID, run.ProjectID, run.SessionID)
		out = append(out, t)
	}
	return out
}

// kubeOut is what the Connectors page shows of a cluster connector.
func kubeOut(st connector.Status) (string, *connector.KubeInfo) {
	if !st.Online {
		return "", nil
	}
	if st.Hello.Kind == connector.KindKubernetes {
		return connector.KindKubernetes, st.Hello.Kubernetes
	}
	return "host", nil
}
