package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
)

// OwnsInterrupt reports whether a subcommand handles Ctrl-C itself (chat
// asks before cancelling a turn), so main must not end the process on it.
func OwnsInterrupt(name string) bool { return name == "chat" }

func (a *app) chatCmd() *cobra.Command {
	var sessionID, name, agentType string
	cmd := &cobra.Command{
		Use:   "chat [MESSAGE]",
		Short: "Talk to the agent: one message, or an interactive conversation",
		Long: `Talk to the agent. With a MESSAGE, sends it, streams the answer and exits; without one,
starts a conversation (a line per message; /new starts a new session, /exit or Ctrl-D leaves).

The answer streams as it is written, with the tool calls the agent makes and their results.
When a call needs a person's approval and you may give it, you are asked inline: answer
y or n, optionally followed by a comment ("n not during business hours"). A dropped
connection is resumed where it stopped. Ctrl-C asks before cancelling the running turn.

With --json, every event is printed as one JSON object per line: {"id", "event", "data"}.`,
		Example: `  opsagent chat "why is the disk on web-1 filling up?"
  opsagent chat --session 0192f0c4-... "and on web-2?"
  opsagent chat`,
		Args: rangeArgs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && strings.TrimSpace(args[0]) == "" {
				return usageErrorf(cmd, "the message is empty")
			}
			if sessionID != "" && (name != "" || agentType != "") {
				return usageErrorf(cmd, "--name and --agent-type describe a new session; they do not go with --session")
			}
			c, err := a.projectClient(cmd.Context())
			if err != nil {
				return err
			}
			ui := newTerminal(a.inv.Stdin, a.inv.Stderr)
			stop := ui.catchInterrupts()
			defer stop()
			s := &chatSession{a: a, c: c, ui: ui, id: sessionID, name: name, agentType: agentType}
			s.f = &follower{a: a, c: c, sid: sessionID, r: newRenderer(a.out), ui: ui}
			if len(args) == 1 {
				return s.oneShot(cmd.Context(), args[0])
			}
			return s.interactive(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVarP(&sessionID, "session", "s", "", "continue this session (its id)")
	f.StringVar(&name, "name", "", "a handle for the new session, to resume it by name")
	f.StringVar(&agentType, "agent-type", "", "profile of a new session: general, sre, security, cost, kubernetes or database")
	return cmd
}

// chatSession is one conversation: the session id once the server gave it,
// and the follower that remembers the last event shown.
type chatSession struct {
	a         *app
	c         *client
	ui        *terminal
	f         *follower
	id        string
	name      string
	agentType string
	role      string // the caller's role, fetched at the first approval
}

func (s *chatSession) oneShot(ctx context.Context, msg string) error {
	done, err := s.turn(ctx, msg)
	if err != nil {
		return err
	}
	return s.outcome(done)
}

// outcome is the exit status of a followed turn: 0 when it completed or
// waits for a decision, 1 when it failed, timed out or was cancelled.
func (s *chatSession) outcome(done *doneData) error {
	if s.a.out.quiet {
		s.a.out.ids(s.id)
	}
	if done.WaitingApproval {
		return nil
	}
	if done.Status != "completed" {
		return &Error{Code: ExitError, Err: fmt.Errorf("the turn ended %s", done.Status)}
	}
	return nil
}

func (s *chatSession) interactive(ctx context.Context) error {
	if s.ui.tty && !s.a.out.json {
		s.a.out.note("%s", s.a.out.errPaint(dim, "Chatting with the agent. /new starts a new session; /exit or Ctrl-D leaves."))
	}
	for {
		line, ok, _ := s.ui.prompt(ctx, s.a.out.errPaint(bold+";"+cyan, "you› "))
		if !ok {
			return nil // end of input, or Ctrl-C at the prompt
		}
		switch msg := strings.TrimSpace(line); msg {
		case "":
			continue
		case "/exit", "/quit":
			return nil
		case "/new":
			s.id, s.f.sid = "", ""
			s.a.out.note("%s", s.a.out.errPaint(dim, "(the next message starts a new session)"))
			continue
		case "/help":
			s.a.out.note("/new starts a new session; /exit or Ctrl-D leaves; Ctrl-C during a turn asks to cancel it")
			continue
		default:
			if _, err := s.turn(ctx, msg); err != nil {
				if ctx.Err() != nil {
					return err
				}
				// A failed turn does not end the conversation.
				fmt.Fprintf(s.a.inv.Stderr, "%s %v\n", s.a.out.errPaint(red, "error:"), err)
			}
		}
	}
}

// turn sends one message and follows what it started.
func (s *chatSession) turn(ctx context.Context, msg string) (*doneData, error) {
	body := map[string]any{"message": msg}
	if s.id != "" {
		body["session_id"] = s.id
	} else {
		s.f.last = 0 // event ids count from 1 in each session
		if s.name != "" {
			body["name"] = s.name
		}
		if s.agentType != "" {
			body["agent_type"] = s.agentType
		}
	}
	hdr := http.Header{}
	hdr.Set("Idempotency-Key", uuid.NewString())
	return s.run(ctx, func(ctx context.Context) (*http.Response, error) {
		return s.c.send(ctx, "POST", "/api/chat", nil, body, hdr)
	})
}

// run follows a turn (opened by open; nil means the session's event stream
// after the last event shown), then the turns that follow approvals decided
// here, until the agent stops.
func (s *chatSession) run(ctx context.Context, open func(context.Context) (*http.Response, error)) (*doneData, error) {
	s.f.r.approval = nil
	done, err := s.f.follow(ctx, open)
	if s.f.sid != "" {
		s.id = s.f.sid
	}
	if err != nil {
		return nil, err
	}
	s.f.r.summary(done, s.id)
	for done.WaitingApproval {
		decided, err := s.decide(ctx, s.f.r.approval)
		if err != nil || !decided {
			return done, err
		}
		s.f.r.approval = nil
		if done, err = s.f.follow(ctx, nil); err != nil {
			return nil, err
		}
		s.f.r.summary(done, s.id)
	}
	return done, nil
}

// decide asks the person at the terminal to approve or deny the call the
// turn stopped at. It returns true when a decision was recorded (so the
// session goes on), false when the approval is left for later or others.
func (s *chatSession) decide(ctx context.Context, ap *approvalData) (bool, error) {
	o := s.a.out
	if ap == nil || ap.ApprovalID == "" {
		o.note("waiting for a person's decision")
		return false, nil
	}
	later := fmt.Sprintf("approval %s is pending: decide with `opsagent approvals approve %s` (or deny)", ap.ApprovalID, ap.ApprovalID)
	if o.json || !s.ui.canAsk() {
		o.note("%s", later)
		return false, nil
	}
	if s.role == "" {
		var me struct {
			Role string `json:"role"`
		}
		if err := s.c.call(ctx, "GET", "/api/auth/me", nil, nil, &me, nil); err == nil {
			s.role = me.Role
		}
	}
	if s.role == "viewer" {
		o.note("approval %s waits for someone who may decide it (your role is viewer)", ap.ApprovalID)
		return false, nil
	}
	for {
		ans, gaveUp := s.ui.ask(ctx, o.errPaint(yellow, "Approve "+ap.Name+"? [y/n, then an optional comment] "))
		if gaveUp {
			o.note("%s", later)
			return false, nil
		}
		verb, comment, _ := strings.Cut(ans, " ")
		var action string
		switch strings.ToLower(verb) {
		case "y", "yes":
			action = "approve"
		case "n", "no":
			action = "deny"
		default:
			o.note("answer y or n (a comment may follow)")
			continue
		}
		err := s.c.call(ctx, "POST", "/api/approvals/"+ap.ApprovalID+"/"+action, nil,
			map[string]string{"comment": strings.TrimSpace(comment)}, nil, nil)
		var apiErr *APIError
		switch {
		case err == nil:
			o.note("%s", o.errPaint(dim, map[string]string{"approve": "approved", "deny": "denied"}[action]+"; the agent continues"))
			return true, nil
		case errors.As(err, &apiErr) && apiErr.Status == http.StatusForbidden:
			o.note("%s; approval %s waits for someone who may decide it", apiErr.Detail, ap.ApprovalID)
			return false, nil
		case errors.As(err, &apiErr) && apiErr.Status == http.StatusConflict:
			o.note("%s", apiErr.Detail) // decided elsewhere meanwhile: follow what happened
			return true, nil
		default:
			return false, err
		}
	}
}
