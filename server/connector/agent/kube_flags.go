package agent

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/opsagent/opsagent/server/connector"
	"github.com/opsagent/opsagent/server/connector/kube"
)

// kubeOpts are the flags of `opsagent connector --kubernetes`.
type kubeOpts struct {
	enabled                          *bool
	kubeconfig, context, name, names *string
}

func kubeFlags(fs *flag.FlagSet, getenv func(string) string) *kubeOpts {
	return &kubeOpts{
		enabled:    fs.Bool("kubernetes", false, "serve a Kubernetes cluster (typed read tools and approved actions; no shell) instead of this host"),
		kubeconfig: fs.String("kubeconfig", getenv("KUBECONFIG"), "with --kubernetes: kubeconfig file (default: the pod's in-cluster service account)"),
		context:    fs.String("context", "", "with --kubernetes: kubeconfig context (default: its current-context)"),
		name:       fs.String("cluster-name", getenv("OPSAGENT_CLUSTER_NAME"), "with --kubernetes: the cluster's name as the server shows it (default: the kubeconfig's cluster, or in-cluster)"),
		names:      fs.String("namespace", "", "with --kubernetes: default namespace of calls that name none (default: the service account's)"),
	}
}

// handler builds the cluster handler; a kubeconfig that cannot be read is
// an error at start, a cluster that refuses the credentials is reported to
// the server (Connectors page) and logged, and the connector stays up.
func (o *kubeOpts) handler(logger *slog.Logger) (Handler, error) {
	var cfg *kube.Config
	var err error
	if *o.kubeconfig != "" {
		cfg, err = kube.LoadKubeconfig(*o.kubeconfig, *o.context)
	} else {
		cfg, err = kube.InCluster()
		if err == nil {
			cfg.Cluster = "in-cluster"
		}
	}
	if err != nil {
		return nil, err
	}
	if *o.name != "" {
		cfg.Cluster = *o.name
	}
	if *o.names != "" {
		cfg.Namespace = *o.names
	}
	c := kube.New(cfg)
	return &kubeHandler{c: c, x: kube.NewExecutor(c), log: logger}, nil
}

type kubeHandler struct {
	c   *kube.Client
	x   *kube.Executor
	log *slog.Logger
}

func (h *kubeHandler) Describe(ctx context.Context, hello *connector.Hello) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	info := h.c.Info(ctx)
	hello.Kind, hello.Kubernetes, hello.HostAllowList, hello.Sandbox, hello.HostProfile = connector.KindKubernetes, &info, false, nil, nil
	if info.Error != "" {
		h.log.Error("connector: the cluster cannot be used", "cluster", info.Cluster, "err", info.Error)
		return
	}
	h.log.Info("connector: serving cluster", "cluster", info.Cluster, "version", info.Version, "rules", strings.Join(info.Verbs, "; "))
}

func (h *kubeHandler) Serve(ctx context.Context, run connector.Run, out io.Writer) connector.Result {
	if run.Kube == nil {
		return connector.Result{ExitCode: -1, Refused: "this connector serves a Kubernetes cluster and runs no shell command; use the kubernetes_* tools"}
	}
	timeout := time.Duration(run.TimeoutMS) * time.Millisecond
	if timeout <= 0 {
		timeout = time.Minute
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c := *run.Kube
	h.log.Info("connector: cluster call", "op", c.Op, "kind", c.Kind, "namespace", c.Namespace, "name", c.Name, "action", c.Action)
	err := h.x.Serve(tctx, c, out)
	switch {
	case err == nil:
		return connector.Result{}
	case errors.Is(tctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		return connector.Result{ExitCode: -1, TimedOut: true, Error: fmt.Sprintf("the cluster did not answer within %s", timeout)}
	}
	if f := (*kube.Forbidden)(nil); errors.As(err, &f) {
		h.log.Info("connector: the cluster refused the call", "op", c.Op, "err", err)
		return connector.Result{ExitCode: 1, Refused: "refused by the cluster's RBAC for this connector's service account: " + f.Message}
	}
	h.log.Info("connector: cluster call failed", "op", c.Op, "err", err)
	return connector.Result{ExitCode: 1, Error: err.Error()}
}
