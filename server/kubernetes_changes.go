package server

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/opsagent/opsagent/server/connector"
	"github.com/opsagent/opsagent/server/connector/kube"
	"github.com/opsagent/opsagent/server/tools"
	"github.com/opsagent/opsagent/store"
)

// The Kubernetes part of the change feed: every kubeChangesEvery, each
// cluster connector connected to this server is asked what rolled out or
// scaled since it was last asked (rollouts are new ReplicaSets and
// ControllerRevisions, scaling the controllers' events), and each lands in
// its project's feed once (its uid is the change's external_id). The
// actions the agent makes with approval land there at once.

const kubeChangesEvery = "@every 30s"

// kubeCursor remembers when each connector was last asked.
type kubeCursor struct {
	mu   sync.Mutex
	last map[string]time.Time
}

func (s *Server) pollKubeChanges(ctx context.Context) error {
	for _, l := range s.connectors.LiveOf(connector.KindKubernetes) {
		s.pollKubeConnector(ctx, l)
	}
	return nil
}

func (s *Server) pollKubeConnector(ctx context.Context, l connector.Live) {
	now := s.Now()
	s.kubeCursor.mu.Lock()
	if s.kubeCursor.last == nil {
		s.kubeCursor.last = map[string]time.Time{}
	}
	last, ok := s.kubeCursor.last[l.ConnectorID]
	s.kubeCursor.mu.Unlock()
	since := time.Hour // a new connection catches up on the last hour
	if ok {
		since = now.Sub(last) + 2*time.Minute // overlap: the feed drops duplicates
	}
	var buf strings.Builder
	cctx, cancel := context.WithTimeout(ctx, kubeCallTimeout)
	defer cancel()
	res, err := s.connectors.Call(cctx, l.ConnectorID, connector.Run{Kube: &connector.KubeCall{Op: "changes", SinceSeconds: int(since.Seconds())},
		TimeoutMS: kubeCallTimeout.Milliseconds(), MaxOutput: 4 << 20}, &buf)
	if err != nil || res.Error != "" || res.Refused != "" {
		s.log.Warn("kubernetes: changes not read", "connector_id", l.ConnectorID, "err", err, "error", res.Error, "refused", res.Refused)
		return
	}
	var changes []kube.Change
	if err := json.Unmarshal([]byte(buf.String()), &changes); err != nil {
		s.log.Warn("kubernetes: the connector's changes are not JSON", "connector_id", l.ConnectorID, "err", err)
		return
	}
	cluster := l.Name
	if l.Hello.Kubernetes != nil && l.Hello.Kubernetes.Cluster != "" {
		cluster = l.Hello.Kubernetes.Cluster
	}
	for _, c := range changes {
		labels := map[string]string{"cluster": cluster, "namespace": c.Namespace, "workload": c.Workload, "connector": l.Name}
		if _, err := s.db.InsertChange(ctx, store.Change{OrgID: l.OrgID, ProjectID: l.ProjectID, Source: store.ChangeSourceKubernetes,
			Kind: c.Kind, Title: c.Title, Service: kube.WorkloadName(c.Workload), Environment: cluster, Description: c.Detail,
			Labels: labels, Author: "kubernetes", ExternalID: c.UID, OccurredAt: c.At}); err != nil {
			s.log.Warn("kubernetes: change not recorded", "connector_id", l.ConnectorID, "err", err)
			return
		}
	}
	s.kubeCursor.mu.Lock()
	s.kubeCursor.last[l.ConnectorID] = now
	s.kubeCursor.mu.Unlock()
}

// kubeActionChange records an approved action in the feed.
func (s *Server) kubeActionChange(orgID, projectID, sessionID string) func(ctx context.Context, cl tools.KubeCluster, call connector.KubeCall, text string) {
	return func(ctx context.Context, cl tools.KubeCluster, call connector.KubeCall, text string) {
		cluster := cl.Cluster
		if cluster == "" {
			cluster = cl.Name
		}
		labels := map[string]string{"cluster": cluster, "namespace": call.Namespace, "workload": strings.TrimSuffix(call.Kind, "s") + "/" + call.Name,
			"connector": cl.Name, "session_id": sessionID}
		_, err := s.db.InsertChange(ctx, store.Change{OrgID: orgID, ProjectID: projectID, Source: store.ChangeSourceKubernetes, Kind: "action",
			Title: strings.TrimSpace(text), Service: call.Name, Environment: cluster, Labels: labels, Author: "opsagent agent (approved)"})
		if err != nil {
			s.log.Warn("kubernetes: action not recorded in the change feed", "session_id", sessionID, "err", err)
		}
	}
}
