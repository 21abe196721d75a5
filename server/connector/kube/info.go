package kube

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/opsagent/opsagent/server/connector"
)

// watched are the resources whose verbs the hello reports.
var watched = map[string]bool{"pods": true, "pods/log": true, "deployments": true, "statefulsets": true, "daemonsets": true,
	"replicasets": true, "jobs": true, "cronjobs": true, "nodes": true, "services": true, "ingresses": true, "events": true,
	"configmaps": true, "secrets": true, "horizontalpodautoscalers": true, "persistentvolumeclaims": true, "namespaces": true,
	"controllerrevisions": true, "*": true}

// Info is what the connector tells the server about the cluster: its
// version, and what its service account may do there. A cluster that
// cannot be reached or refuses the credentials is reported in Error.
func (c *Client) Info(ctx context.Context) connector.KubeInfo {
	info := connector.KubeInfo{Cluster: c.Cluster(), Namespace: c.cfg.Namespace}
	if info.Namespace == "" {
		info.Namespace = "default"
	}
	v, err := c.Version(ctx)
	if err != nil {
		info.Error = credentialHint(err)
		return info
	}
	info.Version = v
	verbs, err := c.RulesReview(ctx, info.Namespace)
	if err != nil {
		info.Error = credentialHint(err)
		return info
	}
	info.Verbs = verbs
	return info
}

// credentialHint names the likely fault of a failed first contact.
func credentialHint(err error) string {
	switch {
	case IsStatus(err, 401):
		return "the cluster refused the connector's credentials (401 Unauthorized: a wrong, expired or revoked token or certificate): " + err.Error()
	case IsStatus(err, 403):
		return "the cluster refused the connector's service account (403): " + err.Error()
	}
	return err.Error()
}

// RulesReview asks the cluster what the connector may do in a namespace
// (cluster-wide rules included) and summarizes it per resource.
func (c *Client) RulesReview(ctx context.Context, namespace string) ([]string, error) {
	body := map[string]any{"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
		"spec": map[string]any{"namespace": namespace}}
	var out struct {
		Status struct {
			ResourceRules []struct {
				Verbs     []string `json:"verbs"`
				Resources []string `json:"resources"`
			} `json:"resourceRules"`
			Incomplete bool `json:"incomplete"`
		} `json:"status"`
	}
	if err := c.do(ctx, "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", nil, "", body, &out); err != nil {
		return nil, err
	}
	per := map[string]map[string]bool{}
	for _, r := range out.Status.ResourceRules {
		for _, res := range r.Resources {
			if !watched[res] {
				continue
			}
			if per[res] == nil {
				per[res] = map[string]bool{}
			}
			for _, v := range r.Verbs {
				per[res][v] = true
			}
		}
	}
	lines := make([]string, 0, len(per))
	for res, vs := range per {
		list := make([]string, 0, len(vs))
		for v := range vs {
			list = append(list, v)
		}
		sort.Strings(list)
		lines = append(lines, fmt.Sprintf("%s: %s", res, strings.Join(list, ",")))
	}
	sort.Strings(lines)
	return lines, nil
}

// CanI asks the cluster whether the connector may do one thing
// (SelfSubjectAccessReview), for doctor and for error messages.
func (c *Client) CanI(ctx context.Context, verb, group, resource, namespace string) (bool, string, error) {
	body := map[string]any{"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
		"spec": map[string]any{"resourceAttributes": map[string]any{"verb": verb, "group": group, "resource": resource, "namespace": namespace}}}
	var out struct {
		Status struct {
			Allowed bool   `json:"allowed"`
			Reason  string `json:"reason"`
		} `json:"status"`
	}
	if err := c.do(ctx, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", nil, "", body, &out); err != nil {
		return false, "", err
	}
	return out.Status.Allowed, out.Status.Reason, nil
}
