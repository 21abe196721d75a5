package kube

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// kind is one resource the tools read.
type kind struct {
	Name       string // the plural the tools and RBAC use
	Group      string // "" for the core group
	Version    string
	Namespaced bool
	Aliases    []string
}

// kinds are the resources the connector serves; anything else is a tool
// error that lists them.
var kinds = []kind{
	{Name: "pods", Version: "v1", Namespaced: true, Aliases: []string{"pod", "po"}},
	{Name: "deployments", Group: "apps", Version: "v1", Namespaced: true, Aliases: []string{"deployment", "deploy"}},
	{Name: "statefulsets", Group: "apps", Version: "v1", Namespaced: true, Aliases: []string{"statefulset", "sts"}},
	{Name: "daemonsets", Group: "apps", Version: "v1", Namespaced: true, Aliases: []string{"daemonset", "ds"}},
	{Name: "replicasets", Group: "apps", Version: "v1", Namespaced: true, Aliases: []string{"replicaset", "rs"}},
	{Name: "jobs", Group: "batch", Version: "v1", Namespaced: true, Aliases: []string{"job"}},
	{Name: "cronjobs", Group: "batch", Version: "v1", Namespaced: true, Aliases: []string{"cronjob", "cj"}},
	{Name: "nodes", Version: "v1", Aliases: []string{"node", "no"}},
	{Name: "namespaces", Version: "v1", Aliases: []string{"namespace", "ns"}},
	{Name: "services", Version: "v1", Namespaced: true, Aliases: []string{"service", "svc"}},
	{Name: "ingresses", Group: "networking.k8s.io", Version: "v1", Namespaced: true, Aliases: []string{"ingress", "ing"}},
	{Name: "events", Version: "v1", Namespaced: true, Aliases: []string{"event", "ev"}},
	{Name: "configmaps", Version: "v1", Namespaced: true, Aliases: []string{"configmap", "cm"}},
	{Name: "secrets", Version: "v1", Namespaced: true, Aliases: []string{"secret"}},
	{Name: "horizontalpodautoscalers", Group: "autoscaling", Version: "v2", Namespaced: true, Aliases: []string{"horizontalpodautoscaler", "hpa", "hpas"}},
	{Name: "persistentvolumeclaims", Version: "v1", Namespaced: true, Aliases: []string{"persistentvolumeclaim", "pvc", "pvcs"}},
}

// KindNames are the supported kinds, for tool schemas and errors.
func KindNames() []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k.Name
	}
	sort.Strings(out)
	return out
}

// lookupKind finds a kind by its plural, singular or short name.
func lookupKind(name string) (kind, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, k := range kinds {
		if k.Name == n {
			return k, nil
		}
		for _, a := range k.Aliases {
			if a == n {
				return k, nil
			}
		}
	}
	return kind{}, fmt.Errorf("unknown kind %q: the supported kinds are %s", name, strings.Join(KindNames(), ", "))
}

// path is the REST path of the kind's collection, or of one object.
func (k kind) path(namespace, name string) string {
	var b strings.Builder
	if k.Group == "" {
		b.WriteString("/api/" + k.Version)
	} else {
		b.WriteString("/apis/" + k.Group + "/" + k.Version)
	}
	if k.Namespaced && namespace != "" {
		b.WriteString("/namespaces/" + url.PathEscape(namespace))
	}
	b.WriteString("/" + k.Name)
	if name != "" {
		b.WriteString("/" + url.PathEscape(name))
	}
	return b.String()
}

// CheckKind reports an unknown kind with the list of supported ones.
func CheckKind(name string) error {
	_, err := lookupKind(name)
	return err
}
