package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

type webhookEventRow struct {
	ID           string    `json:"id"`
	ReceivedAt   time.Time `json:"received_at"`
	Provider     string    `json:"provider"`
	Type         string    `json:"type"`
	Status       string    `json:"status"`
	Verification string    `json:"verification"`
	BodySize     int       `json:"body_size"`
	Test         bool      `json:"test"`
	Error        string    `json:"error"`
	Dispatch     []struct {
		Kind string `json:"kind"`
		ID   string `json:"id"`
	} `json:"dispatch"`
}

func (e *webhookEventRow) row(o *output) []string {
	var started []string
	for _, d := range e.Dispatch {
		started = append(started, d.Kind+" "+d.ID)
	}
	what := strings.Join(started, ", ")
	if e.Error != "" {
		what = e.Error
	}
	typ := e.Type
	if e.Test {
		typ += " (test)"
	}
	return []string{e.ID, e.ReceivedAt.Local().Format("2006-01-02 15:04:05"), o.status(e.Status), e.Provider, dash(typ), clip(dash(what), 60)}
}

var webhookHeader = []string{"ID", "RECEIVED", "STATUS", "PROVIDER", "TYPE", "STARTED"}

func (a *app) webhooksCmd() *cobra.Command {
	return group("webhooks", "Inbound webhook events of a task: events, match (try a routing condition on one)", a.webhookEventsCmd(), a.webhookMatchCmd())
}

func (a *app) webhookEventsCmd() *cobra.Command {
	var pf pageFlags
	var task, status, typ string
	var follow bool
	var every time.Duration
	cmd := &cobra.Command{Use: "events --task TASK", Short: "List a task's received webhook events, newest first; --follow tails them", Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if task == "" {
				return usageErrorf(cmd, "--task is required (the task whose webhook received the events)")
			}
			if every < 200*time.Millisecond {
				return usageErrorf(cmd, "--interval must be at least 200ms")
			}
			id, err := a.resolveTask(ctx, task)
			if err != nil {
				return err
			}
			q := pf.query()
			if status != "" {
				q.Set("status", status)
			}
			if typ != "" {
				q.Set("type", typ)
			}
			path := "/api/tasks/" + url.PathEscape(id) + "/webhook/events"
			if follow {
				return a.tailEvents(ctx, path, q, every)
			}
			p, raw, err := getPage[webhookEventRow](ctx, a, path, q)
			if err != nil {
				return err
			}
			ids := make([]string, len(p.Items))
			rows := make([][]string, len(p.Items))
			for i := range p.Items {
				ids[i] = p.Items[i].ID
				rows[i] = p.Items[i].row(a.out)
			}
			return a.emit(raw, ids, func() {
				a.out.table(webhookHeader, rows)
				a.more(p)
			})
		}}
	pf.add(cmd, 25)
	f := cmd.Flags()
	f.StringVarP(&task, "task", "t", "", "the task (id or exact name)")
	f.StringVar(&status, "status", "", "received, dispatched, no_match, approval_pending, correlated or failed")
	f.StringVar(&typ, "type", "", "only events of this type")
	f.BoolVarP(&follow, "follow", "f", false, "keep printing new events (and status changes) until interrupted")
	f.DurationVar(&every, "interval", 2*time.Second, "with --follow, how often to ask the server")
	return cmd
}

// tailEvents prints the latest page oldest first, then polls, printing each
// new event and each change of an event's status (one JSON object per line
// with --json). It ends when interrupted.
func (a *app) tailEvents(ctx context.Context, path string, q url.Values, every time.Duration) error {
	seen := map[string]string{} // id -> status printed
	headed := false
	for {
		p, _, err := getPage[json.RawMessage](ctx, a, path, q)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		for i := len(p.Items) - 1; i >= 0; i-- {
			var e webhookEventRow
			if json.Unmarshal(p.Items[i], &e) != nil || seen[e.ID] == e.Status {
				continue
			}
			seen[e.ID] = e.Status
			switch {
			case a.out.json:
				fmt.Fprintf(a.inv.Stdout, "%s\n", compactRaw(p.Items[i]))
			case a.out.quiet:
				a.out.ids(e.ID)
			default:
				if !headed {
					fmt.Fprintln(a.inv.Stdout, a.out.paint(bold, strings.Join(webhookHeader, "  ")))
					headed = true
				}
				fmt.Fprintln(a.inv.Stdout, strings.Join(e.row(a.out), "  "))
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(every):
		}
	}
}

// compactRaw is the server's object on one line, its field order kept.
func compactRaw(raw json.RawMessage) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// resolveTask accepts a task id or its exact name.
func (a *app) resolveTask(ctx context.Context, ref string) (string, error) {
	if looksLikeID(ref) {
		return ref, nil
	}
	q := url.Values{}
	q.Set("search", ref)
	q.Set("limit", "200")
	p, _, err := getPage[taskRow](ctx, a, "/api/tasks", q)
	if err != nil {
		return "", err
	}
	var found []string
	for _, t := range p.Items {
		if t.Name == ref {
			found = append(found, t.ID)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", &APIError{Status: 404, Detail: fmt.Sprintf("no task named %q in this project", ref)}
	}
	return "", &Error{Code: ExitUsage, Err: fmt.Errorf("%d tasks are named %q; use the id", len(found), ref)}
}
