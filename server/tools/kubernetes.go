package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/connector"
	"github.com/opsagent/opsagent/server/connector/kube"
)

// The Kubernetes tools are typed calls to a project's cluster connectors
// (`opsagent connector --kubernetes`): reads run without asking, and
// kubernetes_action (restart, scale, undo, delete a pod, cordon,
// uncordon) waits for a person's approval, whose card shows the cluster,
// namespace, kind, name and the exact change as the object is then. The
// cluster's RBAC has the last word: its refusals come back in its words.

// KubeCluster is one cluster connector a call can go to.
type KubeCluster struct {
	ID      string
	Name    string // the connector's name
	Cluster string // the cluster's name as the connector reports it
}

// Label is how a person reads the target.
func (c KubeCluster) Label() string {
	if c.Cluster == "" || c.Cluster == c.Name {
		return "cluster " + c.Name
	}
	return "cluster " + c.Cluster + " (connector " + c.Name + ")"
}

// KubeRemote reaches a project's cluster connectors. The server implements
// it over the connector hub, scoped to the run's project.
type KubeRemote interface {
	// Cluster resolves a target (connector name, label selector, or "" for
	// the project's only cluster) to exactly one online cluster connector;
	// the error is written for the model.
	Cluster(ctx context.Context, target string) (KubeCluster, error)
	// Call sends one typed call and streams its text into out.
	Call(ctx context.Context, c KubeCluster, call connector.KubeCall, out io.Writer) (RemoteResult, error)
}

// kubeArgs are every Kubernetes tool's arguments (each tool's schema
// admits its own).
type kubeArgs struct {
	Target        string `json:"target"`
	Kind          string `json:"kind"`
	Namespace     string `json:"namespace"`
	Name          string `json:"name"`
	Pod           string `json:"pod"`
	LabelSelector string `json:"label_selector"`
	FieldSelector string `json:"field_selector"`
	Limit         int    `json:"limit"`
	Continue      string `json:"continue"`
	Container     string `json:"container"`
	TailLines     int    `json:"tail_lines"`
	Previous      bool   `json:"previous"`
	SinceSeconds  int    `json:"since_seconds"`
	View          string `json:"view"`
	Action        string `json:"action"`
	Replicas      *int   `json:"replicas"`
	ToRevision    int    `json:"to_revision"`
}

// KubeTool is one Kubernetes tool.
type KubeTool struct {
	Remote   KubeRemote
	name     string
	desc     string
	params   json.RawMessage
	readOnly bool
	call     func(a kubeArgs) (connector.KubeCall, error)
	// MaxOutput bounds what the model reads of one call (64 KiB).
	MaxOutput int
	// Changed records a change the tool made (the change feed).
	Changed func(ctx context.Context, cl KubeCluster, call connector.KubeCall, text string)
}

// KubernetesTools are the cluster tools of a run.
func KubernetesTools(remote KubeRemote) []*KubeTool {
	target := str("the cluster connector: its name, or a label selector such as env=prod; leave out when the project has one cluster", "maxLength", 256)
	ns := str("namespace (default: the connector's); for list, leave out to list every namespace", "maxLength", 253)
	name := str("object name", "maxLength", 253)
	kindDesc := "kind: " + strings.Join(kube.KindNames(), ", ") + " (singular and short names such as deploy or hpa work too)"
	kindArg := str(kindDesc, "minLength", 1, "maxLength", 64)
	checkKind := func(k string) error { return kube.CheckKind(k) }
	out := []*KubeTool{
		{name: "kubernetes_list", readOnly: true,
			desc: "List objects of one kind in a cluster, as a table (pods show status, ready, restarts). Filter with label_selector " +
				"(app=web) and field_selector (status.phase!=Running, involvedObject.name=web-1 for events). Pages hold at most " +
				fmt.Sprint(kube.MaxLimit) + " items; a capped page says the continue token for the next. Secrets show names and keys only.",
			params: schema(map[string]any{"target": target, "kind": kindArg, "namespace": ns,
				"label_selector": str("label selector", "maxLength", 1024), "field_selector": str("field selector", "maxLength", 1024),
				"limit":    map[string]any{"type": "integer", "minimum": 1, "maximum": kube.MaxLimit, "description": fmt.Sprintf("items per page (default %d)", kube.DefaultLimit)},
				"continue": str("the continue token of the previous page", "maxLength", 4096)}, "kind"),
			call: func(a kubeArgs) (connector.KubeCall, error) {
				return connector.KubeCall{Op: "list", Kind: a.Kind, Namespace: a.Namespace, LabelSelector: a.LabelSelector,
					FieldSelector: a.FieldSelector, Limit: a.Limit, Continue: a.Continue}, checkKind(a.Kind)
			}},
		{name: "kubernetes_get", readOnly: true,
			desc:   "Read one object of a cluster as JSON (managed fields left out; a Secret shows its keys, never its values).",
			params: schema(map[string]any{"target": target, "kind": kindArg, "namespace": ns, "name": name}, "kind", "name"),
			call: func(a kubeArgs) (connector.KubeCall, error) {
				return connector.KubeCall{Op: "get", Kind: a.Kind, Namespace: a.Namespace, Name: a.Name}, checkKind(a.Kind)
			}},
		{name: "kubernetes_describe_pod", readOnly: true,
			desc: "Summarize a pod like kubectl describe: status, conditions, each container's state, last termination reason, " +
				"restarts, environment (values from secrets masked) and its recent events.",
			params: schema(map[string]any{"target": target, "namespace": ns, "name": name}, "name"),
			call: func(a kubeArgs) (connector.KubeCall, error) {
				return connector.KubeCall{Op: "describe_pod", Namespace: a.Namespace, Name: a.Name}, nil
			}},
		{name: "kubernetes_logs", readOnly: true,
			desc: "Read a container's log: the last tail_lines lines (default 200, at most 5000), of the previous (crashed) container " +
				"with previous=true, or since since_seconds ago. Values of the secrets the pod uses are masked.",
			params: schema(map[string]any{"target": target, "namespace": ns, "pod": str("pod name", "minLength", 1, "maxLength", 253),
				"container":     str("container name (needed when the pod has several)", "maxLength", 253),
				"tail_lines":    map[string]any{"type": "integer", "minimum": 1, "maximum": 5000},
				"previous":      map[string]any{"type": "boolean"},
				"since_seconds": map[string]any{"type": "integer", "minimum": 1, "maximum": 30 * 86400}}, "pod"),
			call: func(a kubeArgs) (connector.KubeCall, error) {
				return connector.KubeCall{Op: "logs", Namespace: a.Namespace, Name: a.Pod, Container: a.Container, TailLines: a.TailLines,
					Previous: a.Previous, SinceSeconds: a.SinceSeconds}, nil
			}},
		{name: "kubernetes_rollout", readOnly: true,
			desc: "Rollout status (view=status) or revision history (view=history) of a deployment, statefulset or daemonset.",
			params: schema(map[string]any{"target": target, "namespace": ns, "name": name,
				"kind": str("deployments, statefulsets or daemonsets", "enum", []string{"deployments", "statefulsets", "daemonsets", "deployment", "statefulset", "daemonset"}),
				"view": str("status or history", "enum", []string{"status", "history"})}, "kind", "name", "view"),
			call: func(a kubeArgs) (connector.KubeCall, error) {
				return connector.KubeCall{Op: "rollout_" + a.View, Kind: a.Kind, Namespace: a.Namespace, Name: a.Name}, nil
			}},
		{name: "kubernetes_top", readOnly: true,
			desc: "CPU and memory use of nodes or pods from metrics-server (an error says so when it is not installed).",
			params: schema(map[string]any{"target": target, "namespace": ns, "kind": str("nodes or pods", "enum", []string{"nodes", "pods"}),
				"label_selector": str("label selector (pods)", "maxLength", 1024)}, "kind"),
			call: func(a kubeArgs) (connector.KubeCall, error) {
				return connector.KubeCall{Op: "top", Kind: a.Kind, Namespace: a.Namespace, LabelSelector: a.LabelSelector}, nil
			}},
		{name: "kubernetes_action",
			desc: "Change a cluster, with a person's approval: restart (rollout restart of a deployment, statefulset or daemonset), " +
				"scale (set replicas), undo (roll a deployment back to the previous revision or to_revision), delete_pod, cordon or " +
				"uncordon a node. The approval shows the exact change as the object is now; if the object changes before it runs " +
				"so that the change no longer applies, it is refused. The cluster's RBAC may refuse it too.",
			params: schema(map[string]any{"target": target, "namespace": ns, "name": name,
				"action":      str("restart, scale, undo, delete_pod, cordon or uncordon", "enum", kube.Actions),
				"kind":        str("deployments, statefulsets, daemonsets or replicasets (restart, scale, undo); not needed for delete_pod, cordon, uncordon", "maxLength", 64),
				"replicas":    map[string]any{"type": "integer", "minimum": 0, "maximum": 1000, "description": "scale: the replicas to set"},
				"to_revision": map[string]any{"type": "integer", "minimum": 1, "description": "undo: the revision to go back to (default the previous)"}},
				"action", "name"),
			call: func(a kubeArgs) (connector.KubeCall, error) {
				c := connector.KubeCall{Op: "plan", Action: a.Action, Kind: a.Kind, Namespace: a.Namespace, Name: a.Name, Replicas: a.Replicas, ToRevision: a.ToRevision}
				switch a.Action {
				case "restart", "scale", "undo":
					if a.Kind == "" {
						c.Kind = "deployments"
					} else if err := checkKind(a.Kind); err != nil {
						return c, err
					}
				}
				if a.Action == "scale" && a.Replicas == nil {
					return c, errors.New("scale needs replicas")
				}
				return c, nil
			}},
	}
	for _, t := range out {
		t.Remote = remote
	}
	return out
}

// Spec describes the tool to the model.
func (t *KubeTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: t.name, Description: t.desc, Parameters: t.params}
}

// ReadOnly: the reads change nothing; kubernetes_action does.
func (t *KubeTool) ReadOnly() bool { return t.readOnly }

// Render is what rules match and the approval card shows: the cluster,
// and for an action the exact change with the object's state now.
func (t *KubeTool) Render(args json.RawMessage) (Rendered, error) {
	var a kubeArgs
	if err := decode(args, &a); err != nil {
		return Rendered{}, err
	}
	call, err := t.call(a)
	if err != nil {
		return Rendered{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := t.Remote.Cluster(ctx, a.Target)
	if err != nil {
		return Rendered{}, err
	}
	if t.readOnly {
		return Rendered{Target: cl.Label(), Command: describeCall(call)}, nil
	}
	p, err := t.plan(ctx, cl, call)
	if err != nil {
		return Rendered{}, err
	}
	return Rendered{Target: cl.Label(), Command: planCard(p)}, nil
}

func describeCall(c connector.KubeCall) string {
	parts := []string{strings.ReplaceAll(c.Op, "_", " ")}
	for _, kv := range [][2]string{{"", c.Kind}, {"-n ", c.Namespace}, {"", c.Name}, {"-l ", c.LabelSelector}, {"--field-selector ", c.FieldSelector}, {"-c ", c.Container}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+kv[1])
		}
	}
	if c.Previous {
		parts = append(parts, "--previous")
	}
	return strings.Join(parts, " ")
}

// plan asks the connector what the action would change now.
func (t *KubeTool) plan(ctx context.Context, cl KubeCluster, call connector.KubeCall) (*kube.Plan, error) {
	call.Op = "plan"
	text, err := t.send(ctx, cl, call)
	if err != nil {
		return nil, err
	}
	var p kube.Plan
	if err := json.Unmarshal([]byte(text), &p); err != nil {
		return nil, fmt.Errorf("the connector's plan could not be read: %v", err)
	}
	return &p, nil
}

// card is the approval's command text; its bracketed tail is the state
// the change was approved against, which the run checks.
func planCard(p *kube.Plan) string {
	where := p.Kind + " " + p.Name
	if p.Namespace != "" {
		where = p.Kind + " " + p.Namespace + "/" + p.Name
	}
	return fmt.Sprintf("%s %s on cluster %s: %s [resourceVersion %s; observed %s]", p.Action, where, p.Cluster, p.Change, p.ResourceVersion, p.Observed)
}

var cardState = regexp.MustCompile(`\[resourceVersion (\S*); observed (.*)\]$`)

// Run makes the call. An action runs against the state its approval showed.
func (t *KubeTool) Run(ctx context.Context, args json.RawMessage) (string, error) {
	var a kubeArgs
	if err := decode(args, &a); err != nil {
		return "", err
	}
	call, err := t.call(a)
	if err != nil {
		return "", err
	}
	cl, err := t.Remote.Cluster(ctx, a.Target)
	if err != nil {
		return "", &agent.Refusal{Reason: err.Error()}
	}
	if !t.readOnly {
		if approved, ok := ctx.Value(approvedTargetKey{}).(string); ok && approved != cl.Label() {
			return "", &agent.Refusal{Reason: fmt.Sprintf("the target resolves to another cluster than the one approved (approved: %s; now: %s); ask again", approved, cl.Label())}
		}
		call.Op = "act"
		if m := cardState.FindStringSubmatch(approvedCommand(ctx)); m != nil {
			call.Expect = &connector.KubeExpect{ResourceVersion: m[1], Observed: m[2]}
		} else {
			// Allowed by a rule without a person: the state is the one read now.
			p, err := t.plan(ctx, cl, call)
			if err != nil {
				return "", err
			}
			call.Op, call.Expect = "act", &connector.KubeExpect{ResourceVersion: p.ResourceVersion, Observed: p.Observed}
		}
	}
	out, err := t.send(ctx, cl, call)
	if err == nil && !t.readOnly && t.Changed != nil {
		t.Changed(ctx, cl, call, out)
	}
	return out, err
}

// send makes one call and reads its capped text.
func (t *KubeTool) send(ctx context.Context, cl KubeCluster, call connector.KubeCall) (string, error) {
	buf := newCapBuffer(orDefault(t.MaxOutput, 64<<10))
	res, err := t.Remote.Call(ctx, cl, call, buf)
	switch {
	case err != nil:
		return "", fmt.Errorf("%s: %v", cl.Label(), err)
	case res.Refused != "":
		return "", &agent.Refusal{Reason: cl.Label() + ": " + res.Refused}
	case res.TimedOut:
		return "", fmt.Errorf("%s: %s", cl.Label(), orText(res.Error, "the call timed out"))
	case res.Error != "":
		return "", fmt.Errorf("%s: %s", cl.Label(), res.Error)
	}
	out := buf.String()
	if res.Truncated {
		out += "\n[the connector stopped forwarding output at its cap]\n"
	}
	return out, nil
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

type approvedCommandKey struct{}

// WithApprovedCommand records the command text a person approved (for a
// Kubernetes action: the object's state it was approved against).
func WithApprovedCommand(ctx context.Context, command string) context.Context {
	return context.WithValue(ctx, approvedCommandKey{}, command)
}

func approvedCommand(ctx context.Context) string {
	s, _ := ctx.Value(approvedCommandKey{}).(string)
	return s
}
