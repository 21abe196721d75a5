package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/opsagent/opsagent/server/connector"
)

var podKind, _ = lookupKind("pods")

func (e *Executor) pod(ctx context.Context, call connector.KubeCall) (obj, string, error) {
	if call.Name == "" {
		return nil, "", errors.New("name the pod (list pods to find it)")
	}
	ns := e.namespace(call)
	var p obj
	if err := e.c.get(ctx, podKind.path(ns, call.Name), nil, &p); err != nil {
		return nil, ns, err
	}
	e.learnPodSecrets(ctx, ns, p)
	return p, ns, nil
}

// learnPodSecrets reads the Secrets a pod's environment comes from, when
// the service account may, so their values are masked in its logs and
// everything else the connector sends. Refusals are fine: nothing to mask
// then that the connector could have seen.
func (e *Executor) learnPodSecrets(ctx context.Context, ns string, p obj) {
	names := map[string]bool{}
	for _, c := range append(p.list("spec", "initContainers"), p.list("spec", "containers")...) {
		for _, env := range c.list("env") {
			if n := env.str("valueFrom", "secretKeyRef", "name"); n != "" {
				names[n] = true
			}
		}
		for _, from := range c.list("envFrom") {
			if n := from.str("secretRef", "name"); n != "" {
				names[n] = true
			}
		}
	}
	sk, _ := lookupKind("secrets")
	for n := range names {
		var s obj
		if err := e.c.get(ctx, sk.path(ns, n), nil, &s); err == nil {
			e.remember(secretValues(s))
		}
	}
}

// envText shows a container's environment: literal values as they are in
// the spec, values from Secrets as references only.
func envText(c obj) string {
	var parts []string
	for _, env := range c.list("env") {
		n := env.str("name")
		switch {
		case env.str("valueFrom", "secretKeyRef", "name") != "":
			parts = append(parts, fmt.Sprintf("%s=<secret %s key %s: masked>", n, env.str("valueFrom", "secretKeyRef", "name"), env.str("valueFrom", "secretKeyRef", "key")))
		case env.str("valueFrom", "configMapKeyRef", "name") != "":
			parts = append(parts, fmt.Sprintf("%s=<configmap %s key %s>", n, env.str("valueFrom", "configMapKeyRef", "name"), env.str("valueFrom", "configMapKeyRef", "key")))
		case env.path("valueFrom") != nil:
			parts = append(parts, n+"=<from the pod's fields or resources>")
		default:
			parts = append(parts, n+"="+env.str("value"))
		}
	}
	for _, from := range c.list("envFrom") {
		if n := from.str("secretRef", "name"); n != "" {
			parts = append(parts, "<every key of secret "+n+": masked>")
		}
		if n := from.str("configMapRef", "name"); n != "" {
			parts = append(parts, "<every key of configmap "+n+">")
		}
	}
	return strings.Join(parts, "; ")
}

func stateText(st obj) string {
	switch {
	case st.path("waiting") != nil:
		return strings.TrimSpace(fmt.Sprintf("waiting: %s %s", st.str("waiting", "reason"), oneLine(st.str("waiting", "message"))))
	case st.path("running") != nil:
		return "running since " + st.str("running", "startedAt")
	case st.path("terminated") != nil:
		return fmt.Sprintf("terminated: %s (exit code %d) at %s %s", st.str("terminated", "reason"), st.num("terminated", "exitCode"),
			st.str("terminated", "finishedAt"), oneLine(st.str("terminated", "message")))
	}
	return "unknown"
}

func (e *Executor) describePod(ctx context.Context, call connector.KubeCall, b *strings.Builder) error {
	p, ns, err := e.pod(ctx, call)
	if err != nil {
		return err
	}
	ready, restarts := podReadyRestarts(p)
	fmt.Fprintf(b, "Pod %s/%s (cluster %s)\n", ns, p.name(), e.c.Cluster())
	fmt.Fprintf(b, "Status:    %s (phase %s), ready %s, %d restarts\n", podStatus(p), p.str("status", "phase"), ready, restarts)
	fmt.Fprintf(b, "Node:      %s   Pod IP: %s   Started: %s\n", orDash(p.str("spec", "nodeName")), orDash(p.str("status", "podIP")), orDash(p.str("status", "startTime")))
	if ow := p.list("metadata", "ownerReferences"); len(ow) > 0 {
		fmt.Fprintf(b, "Owner:     %s/%s\n", ow[0].str("kind"), ow[0].str("name"))
	}
	if r := p.str("status", "reason"); r != "" {
		fmt.Fprintf(b, "Reason:    %s %s\n", r, oneLine(p.str("status", "message")))
	}
	b.WriteString("Conditions:\n")
	for _, c := range p.list("status", "conditions") {
		fmt.Fprintf(b, "  %s=%s", c.str("type"), c.str("status"))
		if r := c.str("reason"); r != "" {
			fmt.Fprintf(b, " (%s: %s)", r, oneLine(c.str("message")))
		}
		b.WriteString("\n")
	}
	statuses := map[string]obj{}
	for _, cs := range append(p.list("status", "initContainerStatuses"), p.list("status", "containerStatuses")...) {
		statuses[cs.str("name")] = cs
	}
	b.WriteString("Containers:\n")
	for _, c := range append(p.list("spec", "initContainers"), p.list("spec", "containers")...) {
		cs := statuses[c.str("name")]
		fmt.Fprintf(b, "  %s (image %s)\n", c.str("name"), c.str("image"))
		if cs == nil {
			b.WriteString("    no status reported yet\n")
		} else {
			fmt.Fprintf(b, "    state: %s\n", stateText(obj(cs.strAny("state"))))
			if last := cs.path("lastState", "terminated"); last != nil {
				fmt.Fprintf(b, "    last termination: %s\n", stateText(obj{"terminated": last}))
			}
			fmt.Fprintf(b, "    ready: %s, restarts: %d\n", cs.str("ready"), cs.num("restartCount"))
		}
		if lim := c.strMapAny("resources", "limits"); len(lim) > 0 {
			fmt.Fprintf(b, "    limits: %s\n", lim)
		}
		if env := envText(c); env != "" {
			fmt.Fprintf(b, "    env: %s\n", env)
		}
	}
	b.WriteString("Recent events (newest first):\n")
	return e.objectEvents(ctx, ns, "Pod", p.name(), b)
}

func (o obj) strAny(key string) map[string]any {
	m, _ := o[key].(map[string]any)
	return m
}

func (o obj) strMapAny(keys ...string) string {
	m, _ := o.path(keys...).(map[string]any)
	parts := make([]string, 0, len(m))
	for k, v := range m {
		parts = append(parts, fmt.Sprintf("%s=%v", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// objectEvents writes the latest events about one object.
func (e *Executor) objectEvents(ctx context.Context, ns, kindName, name string, b *strings.Builder) error {
	ek, _ := lookupKind("events")
	q := url.Values{"fieldSelector": {"involvedObject.kind=" + kindName + ",involvedObject.name=" + name}, "limit": {"200"}}
	var page struct {
		Items []obj `json:"items"`
	}
	if err := e.c.get(ctx, ek.path(ns, ""), q, &page); err != nil {
		fmt.Fprintf(b, "  (events could not be read: %v)\n", err)
		return nil
	}
	items := page.Items
	sort.SliceStable(items, func(i, j int) bool { return eventTime(items[i]) > eventTime(items[j]) })
	if len(items) == 0 {
		b.WriteString("  none\n")
	}
	for i, ev := range items {
		if i == 20 {
			fmt.Fprintf(b, "  [%d older events not shown]\n", len(items)-20)
			break
		}
		fmt.Fprintf(b, "  %s  %s  %s  x%d  %s\n", age(eventTime(ev), e.Now()), ev.str("type"), ev.str("reason"), max(ev.num("count"), 1), oneLine(ev.str("message")))
	}
	return nil
}

// Log bounds: the tail asked for, and the bytes read at most.
const (
	defaultTail = 200
	maxTail     = 5000
	maxLogBytes = 512 << 10
)

func (e *Executor) logs(ctx context.Context, call connector.KubeCall, b *strings.Builder) error {
	p, ns, err := e.pod(ctx, call)
	if err != nil {
		return err
	}
	tail := call.TailLines
	if tail <= 0 {
		tail = defaultTail
	}
	if tail > maxTail {
		return fmt.Errorf("tail_lines %d is over the cap of %d", tail, maxTail)
	}
	container := call.Container
	if container == "" {
		cs := p.list("spec", "containers")
		if len(cs) > 1 {
			names := make([]string, len(cs))
			for i, c := range cs {
				names[i] = c.str("name")
			}
			return fmt.Errorf("pod %s/%s has %d containers (%s): name one", ns, p.name(), len(cs), strings.Join(names, ", "))
		}
		if len(cs) == 1 {
			container = cs[0].str("name")
		}
	}
	q := url.Values{"container": {container}, "tailLines": {strconv.Itoa(tail)}, "limitBytes": {strconv.Itoa(maxLogBytes)}}
	if call.Previous {
		q.Set("previous", "true")
	}
	if call.SinceSeconds > 0 {
		q.Set("sinceSeconds", strconv.Itoa(call.SinceSeconds))
	}
	res, err := e.c.request(ctx, "GET", podKind.path(ns, p.name())+"/log", q, "", nil)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxLogBytes))
	if err != nil {
		return fmt.Errorf("reading the log: %v", err)
	}
	which := "current"
	if call.Previous {
		which = "previous"
	}
	fmt.Fprintf(b, "logs of %s/%s container %s (%s container, last %d lines", ns, p.name(), container, which, tail)
	if call.SinceSeconds > 0 {
		fmt.Fprintf(b, ", since %ds ago", call.SinceSeconds)
	}
	b.WriteString(")\n")
	b.Write(raw)
	if len(raw) == maxLogBytes {
		fmt.Fprintf(b, "\n[log cut at %d bytes]\n", maxLogBytes)
	}
	return nil
}
