package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/opsagent/opsagent/server/agent/runner"
	"github.com/opsagent/opsagent/server/channels"
	"github.com/opsagent/opsagent/server/investigate"
	"github.com/opsagent/opsagent/store"
)

// The relay follows a session's turn (runner.Subscribe, the same events the
// web chat streams) and shows it in the chat thread: a placeholder message
// at once, then the answer as it grows, by editing that message at most
// once per update interval (the platforms rate-limit edits: Slack about one
// per second per channel, Telegram about one per second per chat). An
// approval the turn stops for is posted as a card with buttons. WhatsApp
// cannot edit: it gets the answer once, when the turn ends or stops.

// whatsappWindow is WhatsApp's customer-service window: free-form messages
// only within 24 hours of the person's last message.
const whatsappWindow = 24 * time.Hour

// startRelay relays the session's events after seq `after` to the thread.
func (s *Server) startRelay(rt *channelRT, t *store.ChannelThread, after int64) {
	s.channelBackground(runner.TurnTimeout+time.Minute, func(ctx context.Context) { s.relay(ctx, rt, t, after) })
}

type relay struct {
	s       *Server
	rt      *channelRT
	t       *store.ChannelThread
	canEdit bool
	ref     string // the message being edited
	text    strings.Builder
	step    int
	shown   string // the text last sent
	last    time.Time
}

func (s *Server) relay(ctx context.Context, rt *channelRT, t *store.ChannelThread, after int64) {
	r := &relay{s: s, rt: rt, t: t, canEdit: rt.ch.Platform != store.PlatformWhatsApp, step: -1}
	if r.canEdit {
		ref, err := rt.client.Post(ctx, t.Conversation, t.Thread, channels.Message{Text: "…"})
		if err != nil {
			s.log.Warn("channels: answer not started", "channel_id", rt.ch.ID, "session_id", t.SessionID, "err", err)
			r.canEdit = false
		}
		r.ref, r.last = ref, time.Now()
	}
	sub := s.runner.Subscribe(t.SessionID, after)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		evs, more, err := sub.Next(ctx)
		if errors.Is(err, io.EOF) || err != nil {
			break
		}
		done := false
		for _, e := range evs {
			done = r.event(ctx, e) || done
		}
		if done {
			break
		}
		if len(evs) > 0 {
			// Only an edited message grows; a platform that cannot edit
			// gets the text when the turn ends or stops for an approval.
			if r.canEdit && r.dirty() && time.Since(r.last) >= s.chans.interval {
				r.flush(ctx)
			}
			continue
		}
		var tick <-chan time.Time
		if r.dirty() && r.canEdit {
			wait := max(s.chans.interval-time.Since(r.last), 0)
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			tick = timer.C
		}
		select {
		case <-ctx.Done():
			return
		case <-more:
		case <-tick:
			r.flush(ctx)
		}
	}
	r.flush(ctx)
}

func (r *relay) dirty() bool { return r.text.String() != r.shown }

// event takes one session event; true at the turn's end.
func (r *relay) event(ctx context.Context, e runner.Event) bool {
	switch e.Type {
	case "message.delta":
		var d struct {
			Step int    `json:"step"`
			Text string `json:"text"`
		}
		if json.Unmarshal(e.Data, &d) == nil {
			if d.Step != r.step && r.text.Len() > 0 && r.step >= 0 {
				r.text.WriteString("\n\n")
			}
			r.step = d.Step
			r.text.WriteString(d.Text)
		}
	case "error":
		var d struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(e.Data, &d) == nil && d.Message != "" {
			r.text.WriteString("\n\n⚠️ " + d.Message)
		}
	case "approval.required":
		var d struct {
			ApprovalID string `json:"approval_id"`
		}
		if json.Unmarshal(e.Data, &d) == nil && d.ApprovalID != "" {
			r.flush(ctx)
			r.s.postApprovalCard(ctx, r.rt, r.t.Conversation, r.t.Thread, d.ApprovalID)
		}
	case runner.EventEvidence:
		// The pack, folded to one line (the platforms have no collapsible
		// block): what was gathered from where, and what failed.
		var p investigate.Pack
		if json.Unmarshal(e.Data, &p) == nil {
			r.text.WriteString(evidenceLine(&p) + "\n\n")
		}
	case runner.EventResumed:
		// The server restarted (or another took over) mid-turn: the turn
		// goes on from its last completed step in this new message.
		if r.text.Len() == 0 {
			r.text.WriteString("↻ resumed after a server restart\n\n")
		}
	case "done":
		return true
	}
	return false
}

// flush shows the text so far: an edit, or (WhatsApp) a new message.
func (r *relay) flush(ctx context.Context) {
	text := strings.TrimSpace(r.text.String())
	if text == "" || text == r.shown {
		return
	}
	var err error
	if r.canEdit {
		// Every edit keeps the interval, the last one too (the turn's end
		// or an approval card would otherwise edit at once): the platforms
		// rate-limit edits, and --channel-update-interval promises it.
		r.pace(ctx)
		r.shown = r.text.String()
		err = r.rt.client.Update(ctx, r.t.Conversation, r.ref, channels.Message{Text: text})
		r.last = time.Now()
	} else {
		r.shown, r.last = r.text.String(), time.Now()
		r.text.Reset()
		r.shown = ""
		if !r.s.withinWindow(ctx, r.rt, r.t.Conversation) {
			return
		}
		text = r.s.withheldNote(ctx, r.rt, r.t.ThreadKey) + text
		_, err = r.rt.client.Post(ctx, r.t.Conversation, r.t.Thread, channels.Message{Text: text})
	}
	if err != nil {
		r.s.log.Warn("channels: answer not updated", "channel_id", r.rt.ch.ID, "session_id", r.t.SessionID, "err", err)
	}
}

// pace waits until the update interval has passed since the message was
// last written (or ctx ends).
func (r *relay) pace(ctx context.Context) {
	wait := r.s.chans.interval - time.Since(r.last)
	if wait <= 0 {
		return
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// postApprovalCard posts an approval's card with its buttons and records it,
// so a decision made anywhere updates it.
func (s *Server) postApprovalCard(ctx context.Context, rt *channelRT, conversation, thread, approvalID string) {
	a, err := s.db.FindApproval(ctx, rt.ch.OrgID, rt.ch.ProjectID, approvalID)
	if err != nil {
		return
	}
	if !s.withinWindow(ctx, rt, conversation) {
		return
	}
	ref, err := rt.client.Post(ctx, conversation, thread, channels.Message{Approval: s.approvalCard(ctx, a)})
	if err != nil {
		s.log.Warn("channels: approval card not posted", "channel_id", rt.ch.ID, "approval_id", approvalID, "err", err)
		return
	}
	if err := s.db.AddChannelApprovalMessage(ctx, store.ChannelApprovalMessage{ApprovalID: approvalID, ChannelID: rt.ch.ID,
		Conversation: conversation, MessageRef: ref}); err != nil {
		s.log.Warn("channels: approval card not recorded", "approval_id", approvalID, "err", err)
	}
	// Decided while the card was being posted: show the decision.
	if a2, err := s.db.FindApproval(ctx, rt.ch.OrgID, rt.ch.ProjectID, approvalID); err == nil && a2.Status != store.ApprovalPending {
		s.updateCard(ctx, rt, store.ChannelApprovalMessage{ApprovalID: approvalID, ChannelID: rt.ch.ID, Conversation: conversation, MessageRef: ref}, s.approvalCard(ctx, a2))
	}
}

// withinWindow reports whether the bot may send a free-form message to a
// conversation: always, except on WhatsApp more than 24 hours after the
// person's last message, where the platform allows only paid templates.
// The message is then withheld (not sent against the rules) and the log
// says so.
func (s *Server) withinWindow(ctx context.Context, rt *channelRT, conversation string) bool {
	if rt.ch.Platform != store.PlatformWhatsApp {
		return true
	}
	t, err := s.db.FindChannelThread(ctx, rt.ch.ID, conversation)
	if err == nil && s.Now().Sub(t.LastInboundAt) < whatsappWindow {
		return true
	}
	if err == nil {
		if err := s.db.NoteWithheld(ctx, rt.ch.ID, conversation); err != nil {
			s.log.Warn("channels: withheld message not counted", "channel_id", rt.ch.ID, "err", err)
		}
	}
	s.log.Info("channels: WhatsApp message withheld: more than 24 hours since the person's last message (WhatsApp allows only template messages then)",
		"channel_id", rt.ch.ID)
	return false
}

// withheldNote explains, once the window is open again, what the platform's
// rules kept the bot from sending ("" when nothing was withheld).
func (s *Server) withheldNote(ctx context.Context, rt *channelRT, threadKey string) string {
	n, err := s.db.TakeWithheld(ctx, rt.ch.ID, threadKey)
	if err != nil || n == 0 {
		return ""
	}
	return fmt.Sprintf("(%d earlier message(s) were not delivered: WhatsApp lets a business reply only within 24 hours of your last message. The decisions and answers are in the opsagent console.)\n\n", n)
}
