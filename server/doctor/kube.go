package doctor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/opsagent/opsagent/server/connector/kube"
)

// checkKubeconfig does what `opsagent connector --kubernetes --kubeconfig`
// does first: read the file, reach the cluster, and ask what its
// credentials may do. A bad file, an unreachable cluster and a refused
// token each fail with their own fix.
func (d *doctorRun) checkKubeconfig(ctx context.Context, path string) {
	cfg, err := kube.LoadKubeconfig(path, "")
	if err != nil {
		d.fail("kubernetes", err.Error(), "fix the kubeconfig (kubectl --kubeconfig "+path+" config view), or run the connector in the cluster with its service account")
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	info := kube.New(cfg).Info(ctx)
	switch {
	case info.Error != "" && strings.Contains(info.Error, "401"):
		d.fail("kubernetes", info.Error, "give the connector a valid token: kubectl -n opsagent create token opsagent-connector")
	case info.Error != "":
		d.fail("kubernetes", info.Error, "check the cluster's server URL and CA in the kubeconfig, and that the cluster is up")
	case len(info.Verbs) == 0:
		d.warn("kubernetes", fmt.Sprintf("cluster %s (%s) answers, but these credentials may read none of what the tools use", info.Cluster, info.Version),
			"apply deploy/kubernetes/base (its read-only ClusterRole) for the connector's service account")
	default:
		d.ok("kubernetes", fmt.Sprintf("cluster %s (%s) accepts the credentials; %d resources readable or writable", info.Cluster, info.Version, len(info.Verbs)))
	}
}
