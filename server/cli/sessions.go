package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
)

type sessionRow struct {
	ID           string    `json:"id"`
	Title        string    `json:"title"`
	Source       string    `json:"source"`
	Status       string    `json:"status"`
	TaskName     string    `json:"task_name"`
	Tokens       int64     `json:"tokens"`
	Cost         float64   `json:"cost"`
	LastActivity time.Time `json:"last_activity"`
}

type sessionDetail struct {
	ID              string     `json:"id"`
	Name            string     `json:"name"`
	Title           string     `json:"title"`
	Summary         string     `json:"summary"`
	TaskID          *string    `json:"task_id"`
	TaskName        string     `json:"task_name"`
	AgentType       string     `json:"agent_type"`
	Source          string     `json:"source"`
	TriggerSource   string     `json:"trigger_source"`
	Status          string     `json:"status"`
	WaitingApproval bool       `json:"waiting_approval"`
	Reason          string     `json:"reason"`
	Model           string     `json:"model"`
	TotalTokens     int64      `json:"total_tokens"`
	Cost            float64    `json:"cost"`
	DurationMS      int64      `json:"duration_ms"`
	Turns           int        `json:"turns"`
	ToolCalls       int        `json:"tool_calls"`
	StartedAt       *time.Time `json:"started_at"`
	EndedAt         *time.Time `json:"ended_at"`
	CreatedAt       time.Time  `json:"created_at"`
	LastActivity    time.Time  `json:"last_activity"`
}

func (d *sessionDetail) state() string {
	if d.WaitingApproval {
		return "waiting approval"
	}
	return d.Status
}

func (a *app) sessionsCmd() *cobra.Command {
	return group("sessions", "List, show, resume and cancel agent sessions",
		a.sessionsListCmd(), a.sessionsShowCmd(), a.sessionsResumeCmd(), a.sessionsCancelCmd())
}

func (a *app) sessionsListCmd() *cobra.Command {
	var pf pageFlags
	var search, source string
	cmd := &cobra.Command{Use: "list", Short: "List sessions, most recent activity first", Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.projectClient(cmd.Context())
			if err != nil {
				return err
			}
			q := pf.query()
			if search != "" {
				q.Set("q", search)
			}
			if source != "" {
				q.Set("source", source)
			}
			// The legacy list (an array) is the shape the spec keeps for this client.
			var rows []sessionRow
			var raw json.RawMessage
			if err := c.call(cmd.Context(), "GET", "/api/sessions", q, nil, &rows, &raw); err != nil {
				return err
			}
			ids := make([]string, len(rows))
			table := make([][]string, len(rows))
			for i, s := range rows {
				ids[i] = s.ID
				title := s.Title
				if s.TaskName != "" {
					title = "[" + s.TaskName + "] " + title
				}
				table[i] = []string{s.ID, a.out.status(s.Status), s.Source, clip(title, 48), strconv.FormatInt(s.Tokens, 10), money(s.Cost), ago(s.LastActivity)}
			}
			return a.emit(raw, ids, func() {
				a.out.table([]string{"ID", "STATUS", "SOURCE", "TITLE", "TOKENS", "COST", "ACTIVE"}, table)
			})
		}}
	pf.add(cmd, 50)
	cmd.Flags().StringVar(&search, "search", "", "only sessions whose title or first prompt contains this")
	cmd.Flags().StringVar(&source, "source", "", "only this channel: webchat, telegram, slack, whatsapp or task")
	return cmd
}

func (a *app) sessionsShowCmd() *cobra.Command {
	var transcript, follow bool
	cmd := &cobra.Command{Use: "show ID", Short: "Show a session; --transcript adds the conversation, --follow streams its events", Args: exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			c, err := a.projectClient(ctx)
			if err != nil {
				return err
			}
			if follow {
				return a.watchSession(ctx, c, args[0])
			}
			var d sessionDetail
			var raw json.RawMessage
			if err := c.call(ctx, "GET", "/api/sessions/detail/"+url.PathEscape(args[0]), nil, nil, &d, &raw); err != nil {
				return err
			}
			var tr struct {
				Messages []struct {
					Role      string `json:"role"`
					Content   string `json:"content"`
					ToolCalls []struct {
						Name      string          `json:"name"`
						Arguments json.RawMessage `json:"arguments"`
					} `json:"tool_calls"`
				} `json:"messages"`
			}
			var trRaw json.RawMessage
			if transcript {
				if err := c.call(ctx, "GET", "/api/sessions/"+url.PathEscape(args[0])+"/transcript", nil, nil, &tr, &trRaw); err != nil {
					return err
				}
				if a.out.json {
					raw, _ = json.Marshal(map[string]json.RawMessage{"session": raw, "transcript": trRaw})
				}
			}
			return a.emit(raw, []string{d.ID}, func() {
				task := "-"
				if d.TaskID != nil {
					task = d.TaskName + " (" + *d.TaskID + ")"
				}
				a.out.fields([][2]string{{"id", d.ID}, {"title", d.Title}, {"status", a.out.status(d.state())}, {"reason", dash(d.Reason)},
					{"source", d.Source + " / " + d.TriggerSource}, {"task", task}, {"agent", d.AgentType}, {"model", dash(d.Model)},
					{"turns", strconv.Itoa(d.Turns)}, {"tool calls", strconv.Itoa(d.ToolCalls)}, {"tokens", strconv.FormatInt(d.TotalTokens, 10)},
					{"cost", money(d.Cost)}, {"duration", (time.Duration(d.DurationMS) * time.Millisecond).String()},
					{"created", d.CreatedAt.Format(time.RFC3339)}, {"last activity", ago(d.LastActivity)}, {"summary", clip(d.Summary, 200)}})
				for _, m := range tr.Messages {
					fmt.Fprintf(a.inv.Stdout, "\n%s\n", a.out.paint(bold, m.Role+":"))
					if m.Content != "" {
						fmt.Fprintln(a.inv.Stdout, m.Content)
					}
					for _, tc := range m.ToolCalls {
						fmt.Fprintf(a.inv.Stdout, "%s %s %s\n", a.out.paint(cyan, "▸"), tc.Name, clip(callText(tc.Arguments), 300))
					}
				}
			})
		}}
	cmd.Flags().BoolVar(&transcript, "transcript", false, "also print the conversation (messages and tool calls)")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "print the session's events and follow a turn in progress to its end")
	return cmd
}

// watchSession prints every event of a session and follows the live turn,
// if any, to its end (the server closes the stream then); a dropped
// connection resumes with Last-Event-ID.
func (a *app) watchSession(ctx context.Context, c *client, id string) error {
	r := newRenderer(a.out)
	f := &follower{a: a, c: c, sid: id, r: r}
	lost := time.Time{}
	for {
		res, err := f.openEvents(ctx)
		if err == nil {
			err = readEvents(res.Body, func(ev event) bool {
				if ev.ID > f.last {
					f.last = ev.ID
					r.show(ev)
				}
				return true
			})
			res.Body.Close()
			if err == nil {
				return nil
			}
		}
		var apiErr *APIError
		if errors.As(err, &apiErr) && apiErr.Status < 500 || ctx.Err() != nil {
			return err
		}
		if lost.IsZero() {
			lost = time.Now()
		} else if time.Since(lost) > reconnectFor {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func (a *app) sessionsResumeCmd() *cobra.Command {
	var detach bool
	cmd := &cobra.Command{Use: "resume ID|NAME PROMPT", Short: "Continue a session with a new prompt and follow the turn", Args: exactArgs(2, "ID|NAME", "PROMPT"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			c, err := a.projectClient(ctx)
			if err != nil {
				return err
			}
			hdr := http.Header{}
			hdr.Set("Idempotency-Key", uuid.NewString())
			res, err := c.send(ctx, "POST", "/api/sessions/"+url.PathEscape(args[0])+"/resume", nil, map[string]string{"prompt": args[1]}, hdr)
			if err != nil {
				return err
			}
			var out struct {
				SessionID    string `json:"session_id"`
				FirstEventID int64  `json:"first_event_id"`
			}
			var raw json.RawMessage
			err = json.NewDecoder(res.Body).Decode(&raw)
			res.Body.Close()
			if err == nil {
				err = json.Unmarshal(raw, &out)
			}
			if err != nil {
				return fmt.Errorf("unexpected answer to resume: %w", err)
			}
			if detach {
				return a.emit(raw, []string{out.SessionID}, func() {
					fmt.Fprintf(a.inv.Stdout, "Resumed session %s; follow it with `opsagent sessions show %s --follow`\n", out.SessionID, out.SessionID)
				})
			}
			return a.followRun(ctx, c, out.SessionID, out.FirstEventID-1)
		}}
	cmd.Flags().BoolVarP(&detach, "detach", "d", false, "do not follow the turn; print the resume result")
	return cmd
}

// followRun follows a turn that is already under way (a resume, a task
// run) from after event last, deciding approvals inline like chat does.
func (a *app) followRun(ctx context.Context, c *client, sid string, last int64) error {
	ui := newTerminal(a.inv.Stdin, a.inv.Stderr)
	s := &chatSession{a: a, c: c, ui: ui, id: sid}
	s.f = &follower{a: a, c: c, sid: sid, last: last, r: newRenderer(a.out), ui: ui}
	done, err := s.run(ctx, nil)
	if err != nil {
		return err
	}
	if a.out.quiet {
		a.out.ids(sid)
	}
	return s.outcome(done)
}

func (a *app) sessionsCancelCmd() *cobra.Command {
	return &cobra.Command{Use: "cancel ID", Short: "Cancel a running, waiting or pending session", Args: exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.projectClient(cmd.Context())
			if err != nil {
				return err
			}
			var d sessionDetail
			var raw json.RawMessage
			if err := c.call(cmd.Context(), "POST", "/api/sessions/"+url.PathEscape(args[0])+"/cancel", nil, nil, &d, &raw); err != nil {
				return err
			}
			return a.emit(raw, []string{d.ID}, func() {
				fmt.Fprintf(a.inv.Stdout, "Session %s is %s%s\n", d.ID, a.out.status(d.Status), strings.TrimSuffix(" ("+d.Reason+")", " ()"))
			})
		}}
}
