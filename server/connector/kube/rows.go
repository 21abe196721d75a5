package kube

import (
	"encoding/base64"
	"fmt"
	"sort"
	"strings"
	"time"
)

func decodeB64(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }

// podStatus is the one word kubectl shows for a pod: the reason a
// container waits or ended with when there is one, else the phase.
func podStatus(p obj) string {
	if p.str("metadata", "deletionTimestamp") != "" {
		return "Terminating"
	}
	reason := p.str("status", "reason")
	for _, cs := range append(p.list("status", "initContainerStatuses"), p.list("status", "containerStatuses")...) {
		if r := cs.str("state", "waiting", "reason"); r != "" && r != "ContainerCreating" && r != "PodInitializing" {
			return r
		}
		if r := cs.str("state", "terminated", "reason"); r != "" && r != "Completed" {
			reason = r
		}
	}
	if reason != "" {
		return reason
	}
	if ph := p.str("status", "phase"); ph != "" {
		return ph
	}
	return "Unknown"
}

func podReadyRestarts(p obj) (string, int64) {
	var ready, total int
	var restarts int64
	for _, cs := range p.list("status", "containerStatuses") {
		total++
		if b, _ := cs.path("ready").(bool); b {
			ready++
		}
		restarts += cs.num("restartCount")
	}
	if total == 0 {
		total = len(p.list("spec", "containers"))
	}
	return fmt.Sprintf("%d/%d", ready, total), restarts
}

// columns are each kind's table: header and one row per object.
func columns(k kind, items []obj, now time.Time) ([]string, [][]string) {
	var header []string
	row := func(o obj) []string { return nil }
	created := func(o obj) string { return age(o.str("metadata", "creationTimestamp"), now) }
	switch k.Name {
	case "pods":
		header = []string{"NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "NODE", "AGE"}
		row = func(o obj) []string {
			ready, restarts := podReadyRestarts(o)
			return []string{o.namespace(), o.name(), ready, podStatus(o), fmt.Sprint(restarts), o.str("spec", "nodeName"), created(o)}
		}
	case "deployments", "statefulsets", "replicasets":
		header = []string{"NAMESPACE", "NAME", "READY", "UP-TO-DATE", "AVAILABLE", "GENERATION", "AGE"}
		row = func(o obj) []string {
			return []string{o.namespace(), o.name(), fmt.Sprintf("%d/%d", o.num("status", "readyReplicas"), o.num("spec", "replicas")),
				fmt.Sprint(o.num("status", "updatedReplicas")), fmt.Sprint(o.num("status", "availableReplicas")),
				fmt.Sprintf("%d (observed %d)", o.num("metadata", "generation"), o.num("status", "observedGeneration")), created(o)}
		}
	case "daemonsets":
		header = []string{"NAMESPACE", "NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AGE"}
		row = func(o obj) []string {
			return []string{o.namespace(), o.name(), fmt.Sprint(o.num("status", "desiredNumberScheduled")), fmt.Sprint(o.num("status", "currentNumberScheduled")),
				fmt.Sprint(o.num("status", "numberReady")), fmt.Sprint(o.num("status", "updatedNumberScheduled")), created(o)}
		}
	case "jobs":
		header = []string{"NAMESPACE", "NAME", "COMPLETIONS", "ACTIVE", "FAILED", "AGE"}
		row = func(o obj) []string {
			return []string{o.namespace(), o.name(), fmt.Sprintf("%d/%d", o.num("status", "succeeded"), max(o.num("spec", "completions"), 1)),
				fmt.Sprint(o.num("status", "active")), fmt.Sprint(o.num("status", "failed")), created(o)}
		}
	case "cronjobs":
		header = []string{"NAMESPACE", "NAME", "SCHEDULE", "SUSPEND", "ACTIVE", "LAST SCHEDULE", "AGE"}
		row = func(o obj) []string {
			return []string{o.namespace(), o.name(), o.str("spec", "schedule"), o.str("spec", "suspend"), fmt.Sprint(len(o.list("status", "active"))),
				age(o.str("status", "lastScheduleTime"), now), created(o)}
		}
	case "nodes":
		header = []string{"NAME", "STATUS", "VERSION", "INTERNAL-IP", "AGE"}
		row = func(o obj) []string {
			status := "NotReady"
			for _, c := range o.list("status", "conditions") {
				if c.str("type") == "Ready" && c.str("status") == "True" {
					status = "Ready"
				}
			}
			if b, _ := o.path("spec", "unschedulable").(bool); b {
				status += ",SchedulingDisabled"
			}
			ip := ""
			for _, a := range o.list("status", "addresses") {
				if a.str("type") == "InternalIP" {
					ip = a.str("address")
				}
			}
			return []string{o.name(), status, o.str("status", "nodeInfo", "kubeletVersion"), ip, created(o)}
		}
	case "namespaces":
		header = []string{"NAME", "STATUS", "AGE"}
		row = func(o obj) []string { return []string{o.name(), o.str("status", "phase"), created(o)} }
	case "services":
		header = []string{"NAMESPACE", "NAME", "TYPE", "CLUSTER-IP", "PORTS", "AGE"}
		row = func(o obj) []string {
			var ports []string
			for _, p := range o.list("spec", "ports") {
				ports = append(ports, fmt.Sprintf("%d/%s", p.num("port"), p.str("protocol")))
			}
			return []string{o.namespace(), o.name(), o.str("spec", "type"), o.str("spec", "clusterIP"), strings.Join(ports, ","), created(o)}
		}
	case "ingresses":
		header = []string{"NAMESPACE", "NAME", "CLASS", "HOSTS", "AGE"}
		row = func(o obj) []string {
			var hosts []string
			for _, r := range o.list("spec", "rules") {
				hosts = append(hosts, r.str("host"))
			}
			return []string{o.namespace(), o.name(), o.str("spec", "ingressClassName"), strings.Join(hosts, ","), created(o)}
		}
	case "events":
		header = []string{"NAMESPACE", "LAST SEEN", "TYPE", "REASON", "OBJECT", "COUNT", "MESSAGE"}
		row = func(o obj) []string {
			return []string{o.namespace(), age(eventTime(o), now), o.str("type"), o.str("reason"),
				strings.ToLower(o.str("involvedObject", "kind")) + "/" + o.str("involvedObject", "name"), fmt.Sprint(max(o.num("count"), 1)), oneLine(o.str("message"))}
		}
	case "configmaps":
		header = []string{"NAMESPACE", "NAME", "KEYS", "AGE"}
		row = func(o obj) []string {
			return []string{o.namespace(), o.name(), strings.Join(sortedKeys(o.strMap("data")), ","), created(o)}
		}
	case "secrets":
		header = []string{"NAMESPACE", "NAME", "TYPE", "KEYS", "AGE"}
		row = func(o obj) []string {
			keys, _ := o.path("keys").([]string)
			return []string{o.namespace(), o.name(), o.str("type"), strings.Join(keys, ","), age(o.str("metadata", "creationTimestamp"), now)}
		}
	case "horizontalpodautoscalers":
		header = []string{"NAMESPACE", "NAME", "REFERENCE", "MIN", "MAX", "CURRENT", "DESIRED", "AGE"}
		row = func(o obj) []string {
			return []string{o.namespace(), o.name(), o.str("spec", "scaleTargetRef", "kind") + "/" + o.str("spec", "scaleTargetRef", "name"),
				fmt.Sprint(o.num("spec", "minReplicas")), fmt.Sprint(o.num("spec", "maxReplicas")), fmt.Sprint(o.num("status", "currentReplicas")),
				fmt.Sprint(o.num("status", "desiredReplicas")), created(o)}
		}
	case "persistentvolumeclaims":
		header = []string{"NAMESPACE", "NAME", "STATUS", "VOLUME", "CAPACITY", "STORAGECLASS", "AGE"}
		row = func(o obj) []string {
			return []string{o.namespace(), o.name(), o.str("status", "phase"), o.str("spec", "volumeName"), o.str("status", "capacity", "storage"),
				o.str("spec", "storageClassName"), created(o)}
		}
	}
	if !k.Namespaced && header[0] == "NAMESPACE" {
		header = header[1:]
	}
	rows := make([][]string, 0, len(items))
	for _, o := range items {
		rows = append(rows, row(o))
	}
	return header, rows
}

func eventTime(o obj) string {
	for _, f := range [][]string{{"lastTimestamp"}, {"eventTime"}, {"series", "lastObservedTime"}, {"firstTimestamp"}, {"metadata", "creationTimestamp"}} {
		if s := o.str(f...); s != "" {
			return s
		}
	}
	return ""
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
