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
	"sync"
	"time"

	"github.com/opsagent/opsagent/server/connector"
)

// Paging bounds: a list answers at most MaxLimit items a call, and says how
// to ask for the next page.
const (
	DefaultLimit = 50
	MaxLimit     = 500
	// maxOutput bounds the text of one call; the server caps again.
	maxOutput = 1 << 20
)

// Executor answers the typed calls of the server against one cluster.
type Executor struct {
	c   *Client
	Now func() time.Time
	// secrets are the values of every Secret this connector has read (to
	// show its keys, or the ones a pod's environment references): masked
	// in everything it sends, logs included.
	mu      sync.Mutex
	secrets map[string]struct{}
}

// NewExecutor serves calls with a client.
func NewExecutor(c *Client) *Executor {
	return &Executor{c: c, Now: time.Now, secrets: map[string]struct{}{}}
}

// Serve answers one call, writing its text to out. The error is the
// cluster's refusal or why the call is wrong, in words for the model.
func (e *Executor) Serve(ctx context.Context, call connector.KubeCall, out io.Writer) error {
	var b strings.Builder
	err := e.serve(ctx, call, &b)
	text := b.String()
	if len(text) > maxOutput {
		text = text[:maxOutput] + fmt.Sprintf("\n[output cut at %d bytes: ask for fewer items or a narrower selector]\n", maxOutput)
	}
	if _, werr := io.WriteString(out, e.mask(text)); werr != nil && err == nil {
		err = werr
	}
	var ae *APIError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ae) && ae.Code == 403:
		return &Forbidden{Message: e.mask(err.Error())}
	}
	return errors.New(e.mask(err.Error()))
}

// Forbidden is the cluster's RBAC refusing the connector's service
// account, in the cluster's words.
type Forbidden struct{ Message string }

func (f *Forbidden) Error() string { return f.Message }

func (e *Executor) serve(ctx context.Context, call connector.KubeCall, b *strings.Builder) error {
	switch call.Op {
	case "list":
		return e.list(ctx, call, b)
	case "get":
		return e.get(ctx, call, b)
	case "describe_pod":
		return e.describePod(ctx, call, b)
	case "logs":
		return e.logs(ctx, call, b)
	case "rollout_status":
		return e.rolloutStatus(ctx, call, b)
	case "rollout_history":
		return e.rolloutHistory(ctx, call, b)
	case "top":
		return e.top(ctx, call, b)
	case "plan":
		p, err := e.plan(ctx, call)
		if err != nil {
			return err
		}
		b.WriteString(p.render())
		return nil
	case "act":
		return e.act(ctx, call, b)
	case "changes":
		return e.changes(ctx, call, b)
	}
	return fmt.Errorf("unknown operation %q", call.Op)
}

// minMasked is the shortest value masked: a shorter one ("shop", "admin")
// is more likely a word in the output than a leaked secret.
const minMasked = 8

func (e *Executor) remember(values []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, v := range values {
		if len(v) >= minMasked && len(e.secrets) < 100000 {
			e.secrets[v] = struct{}{}
		}
	}
}

// mask replaces every known secret value, longest first (so a value that
// contains another is masked whole).
func (e *Executor) mask(s string) string {
	e.mu.Lock()
	vals := make([]string, 0, len(e.secrets))
	for v := range e.secrets {
		if strings.Contains(s, v) {
			vals = append(vals, v)
		}
	}
	e.mu.Unlock()
	sort.Slice(vals, func(i, j int) bool { return len(vals[i]) > len(vals[j]) })
	for _, v := range vals {
		s = strings.ReplaceAll(s, v, "[masked secret]")
	}
	return s
}

func (e *Executor) namespace(call connector.KubeCall) string {
	if call.Namespace != "" {
		return call.Namespace
	}
	if e.c.cfg.Namespace != "" {
		return e.c.cfg.Namespace
	}
	return "default"
}

func (e *Executor) list(ctx context.Context, call connector.KubeCall, b *strings.Builder) error {
	k, err := lookupKind(call.Kind)
	if err != nil {
		return err
	}
	limit := call.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	if limit > MaxLimit {
		return fmt.Errorf("limit %d is over the cap of %d items a page; page with continue instead", limit, MaxLimit)
	}
	q := url.Values{"limit": {strconv.Itoa(limit)}}
	if call.LabelSelector != "" {
		q.Set("labelSelector", call.LabelSelector)
	}
	if call.FieldSelector != "" {
		q.Set("fieldSelector", call.FieldSelector)
	}
	if call.Continue != "" {
		q.Set("continue", call.Continue)
	}
	var page struct {
		Metadata struct {
			Continue           string `json:"continue"`
			RemainingItemCount *int64 `json:"remainingItemCount"`
		} `json:"metadata"`
		Items []obj `json:"items"`
	}
	// A namespaced kind without a namespace lists every namespace.
	if err := e.c.get(ctx, k.path(call.Namespace, ""), q, &page); err != nil {
		return err
	}
	items := page.Items
	if k.Name == "secrets" {
		for i, o := range items {
			e.remember(secretValues(o))
			items[i] = secretShape(o)
		}
	}
	if k.Name == "events" {
		sort.SliceStable(items, func(i, j int) bool { return eventTime(items[i]) > eventTime(items[j]) })
	}
	where := "all namespaces"
	if !k.Namespaced {
		where = "cluster-wide"
	} else if call.Namespace != "" {
		where = "namespace " + call.Namespace
	}
	if len(items) == 0 {
		fmt.Fprintf(b, "no %s in %s", k.Name, where)
		if call.LabelSelector != "" || call.FieldSelector != "" {
			fmt.Fprintf(b, " matching %s", strings.Trim(call.LabelSelector+" "+call.FieldSelector, " "))
		}
		b.WriteString("\n")
		return nil
	}
	header, rows := columns(k, items, e.Now())
	fmt.Fprintf(b, "%d %s in %s (cluster %s)\n", len(items), k.Name, where, e.c.Cluster())
	b.WriteString(table(header, rows))
	if page.Metadata.Continue != "" {
		more := "more"
		if n := page.Metadata.RemainingItemCount; n != nil {
			more = fmt.Sprintf("%d more", *n)
		}
		fmt.Fprintf(b, "[page capped at %d; %s: call again with continue=%q]\n", limit, more, page.Metadata.Continue)
	}
	return nil
}

func (e *Executor) get(ctx context.Context, call connector.KubeCall, b *strings.Builder) error {
	k, err := lookupKind(call.Kind)
	if err != nil {
		return err
	}
	if call.Name == "" {
		return errors.New("get needs a name (list the kind to find names)")
	}
	ns := ""
	if k.Namespaced {
		ns = e.namespace(call)
	}
	var o obj
	if err := e.c.get(ctx, k.path(ns, call.Name), nil, &o); err != nil {
		return err
	}
	if k.Name == "secrets" {
		e.remember(secretValues(o))
	}
	b.WriteString(pretty(scrub(k, o)))
	b.WriteString("\n")
	return nil
}
