package connector

// The Kubernetes connector (`opsagent connector --kubernetes`, package
// connector/kube) speaks the same frames as a host connector. Its hello
// says kind "kubernetes" and carries the cluster's facts; a run frame to it
// carries a typed KubeCall instead of a shell command, and its output
// frames carry the call's text. It runs no shell command ever.

// KindKubernetes is the hello kind of a cluster connector ("" is a host).
const KindKubernetes = "kubernetes"

// KubeInfo is what a cluster connector reports about its cluster.
type KubeInfo struct {
	Cluster string `json:"cluster"`
	Version string `json:"version"`
	// Verbs are what the service account may do, per resource, as the
	// cluster's SelfSubjectRulesReview answered ("deployments: get,list,watch").
	Verbs []string `json:"verbs,omitempty"`
	// Namespace is where the review was asked (rules of Roles are per namespace).
	Namespace string `json:"namespace,omitempty"`
	// Error is why the cluster could not be reached or refused the
	// credentials (a bad kubeconfig or token); the connector stays
	// connected so the Connectors page can say so.
	Error string `json:"error,omitempty"`
}

// KubeCall is one typed request to a cluster. Op says which fields count.
type KubeCall struct {
	Op            string `json:"op"` // list, get, describe_pod, logs, rollout_status, rollout_history, top, plan, act
	Kind          string `json:"kind,omitempty"`
	Namespace     string `json:"namespace,omitempty"`
	Name          string `json:"name,omitempty"`
	LabelSelector string `json:"label_selector,omitempty"`
	FieldSelector string `json:"field_selector,omitempty"`
	Limit         int    `json:"limit,omitempty"`
	Continue      string `json:"continue,omitempty"`
	// Logs.
	Container    string `json:"container,omitempty"`
	TailLines    int    `json:"tail_lines,omitempty"`
	Previous     bool   `json:"previous,omitempty"`
	SinceSeconds int    `json:"since_seconds,omitempty"`
	// Actions (plan and act).
	Action     string `json:"action,omitempty"` // restart, scale, undo, delete_pod, cordon, uncordon
	Replicas   *int   `json:"replicas,omitempty"`
	ToRevision int    `json:"to_revision,omitempty"`
	// Expect is what the object looked like when a person approved the
	// change; act refuses when it changed so that the change no longer applies.
	Expect *KubeExpect `json:"expect,omitempty"`
}

// KubeExpect is an approved object's state.
type KubeExpect struct {
	ResourceVersion string `json:"resource_version"`
	Observed        string `json:"observed"`
}

// sanitizeKube bounds what a cluster connector reports.
func sanitizeKube(k *KubeInfo) *KubeInfo {
	if k == nil {
		return nil
	}
	c := *k
	c.Cluster, c.Version, c.Namespace, c.Error = clip(c.Cluster, 128), clip(c.Version, 64), clip(c.Namespace, 63), clip(c.Error, 1024)
	if len(c.Verbs) > 64 {
		c.Verbs = c.Verbs[:64]
	}
	for i := range c.Verbs {
		c.Verbs[i] = clip(c.Verbs[i], 256)
	}
	return &c
}
