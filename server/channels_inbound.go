package server

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/opsagent/opsagent/server/agent/runner"
	"github.com/opsagent/opsagent/server/channels"
	slackch "github.com/opsagent/opsagent/server/channels/slack"
	"github.com/opsagent/opsagent/store"
)

// inboundChannel resolves an inbound route's channel (404 unless it exists,
// is enabled and is of the route's platform), applies the per-channel rate
// limit, reads the body (413 above channelMaxBody) and opens the channel.
func (s *Server) inboundChannel(c *Ctx, platform string) (*channelRT, []byte, error) {
	id, err := c.IDParam("channel_id")
	if err != nil {
		return nil, nil, err
	}
	if ok, retry := s.chans.inbound.Allow(id); !ok {
		return nil, nil, &RateLimitError{RetryAfter: retry}
	}
	ch, err := s.db.FindInboundChannel(c.Context(), id)
	if err != nil {
		return nil, nil, err
	}
	if ch.Platform != platform {
		return nil, nil, store.NotFound("channel")
	}
	body, err := readBody(c.R, c.Route.MaxBody)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, nil, err
		}
		return nil, nil, badRequest("body_unreadable", "could not read the request body")
	}
	rt, err := s.chans.runtime(c.Context(), s, ch)
	if err != nil {
		return nil, nil, err
	}
	return rt, body, nil
}

// rejectInbound answers a request that failed the platform's verification:
// nothing is stored or run; the log says why (never the secret).
func (s *Server) rejectInbound(c *Ctx, rt *channelRT, why string) error {
	s.chans.count(rt.ch.Platform, "refused")
	s.log.Warn("channels: inbound request refused", "channel_id", rt.ch.ID, "platform", rt.ch.Platform, "reason", why, "ip", c.ClientIP())
	return unauthorized("the request is not signed by the platform with this channel's secret")
}

// handleSlackInbound is POST /api/inbound/slack/{channel_id}: the Events API
// (url_verification, app_mention, message.im) and interactivity (buttons,
// the comment modal), all signed with the app's signing secret.
func (s *Server) handleSlackInbound(c *Ctx) error {
	rt, body, err := s.inboundChannel(c, store.PlatformSlack)
	if err != nil {
		return err
	}
	if err := slackch.Verify(c.R.Header, body, rt.creds.SigningSecret, time.Now()); err != nil {
		return s.rejectInbound(c, rt, "bad_signature")
	}
	in, err := slackch.Parse(c.R.Header.Get("Content-Type"), body, rt.cfg.BotUserID)
	if err != nil {
		return invalid("not a Slack event or interaction payload", "value_error", "body")
	}
	if in.Kind == channels.KindChallenge {
		return c.JSON(200, map[string]string{"challenge": in.Challenge})
	}
	if err := s.channelDispatch(c, rt, in); err != nil {
		return err
	}
	// Slack reads an empty 200 as "handled" (and closes a submitted modal).
	c.W.WriteHeader(http.StatusOK)
	return nil
}

var linkCommand = regexp.MustCompile(`(?i)^/?link(@\S+)?\s+(OPS-[A-Z0-9]+)\s*$`)

// channelDispatch acts on one verified inbound event. Platform failures
// after this point are logged, never answered with an error: the platform
// would only retry, and the delivery is already recorded. A delivery
// processed before is answered as handled, so the platform stops retrying.
func (s *Server) channelDispatch(c *Ctx, rt *channelRT, in channels.Inbound) error {
	if in.Kind != channels.KindIgnore && !rt.allowsChat(in.Conversation) {
		if err := s.db.CountIgnoredMessage(c.Context(), rt.ch.ID); err != nil {
			return err
		}
		s.chans.count(rt.ch.Platform, "not_allowed")
		s.log.Info("channels: message from a chat not allowed ignored", "channel_id", rt.ch.ID, "conversation", in.Conversation)
		return nil
	}
	err := s.dispatchInbound(c, rt, in)
	switch {
	case errors.Is(err, store.ErrDuplicateDelivery):
		s.chans.count(rt.ch.Platform, "duplicate")
		return nil
	case err == nil:
		s.chans.count(rt.ch.Platform, in.Kind)
	}
	return err
}

func (s *Server) dispatchInbound(c *Ctx, rt *channelRT, in channels.Inbound) error {
	switch in.Kind {
	case channels.KindDecision, channels.KindCommentUI:
		return s.channelDecision(c, rt, in)
	case channels.KindMessage:
		if m := linkCommand.FindStringSubmatch(strings.TrimSpace(in.Text)); m != nil {
			return s.channelLink(c, rt, in, m[2])
		}
		if m := investigateCommand.FindStringSubmatch(strings.TrimSpace(in.Text)); m != nil {
			return s.channelInvestigate(c, rt, in, m[1])
		}
		return s.channelMessage(c, rt, in)
	}
	return nil
}

// channelLink redeems a link code sent to the bot.
func (s *Server) channelLink(c *Ctx, rt *channelRT, in channels.Inbound, code string) error {
	if err := s.db.ClaimChannelDelivery(c.Context(), rt.ch.ID, in.DeliveryKey); err != nil {
		return err
	}
	l, err := s.db.RedeemChannelLinkCode(c.Context(), rt.ch.ID, linkCodeHash(code), in.User, in.UserName)
	if store.IsNotFound(err) {
		s.audit(c.Context(), AuditEvent{Action: "channel.link_failed", Outcome: "failure", OrgID: rt.ch.OrgID, ProjectID: rt.ch.ProjectID,
			TargetType: "channel", TargetID: rt.ch.ID, IP: c.ClientIP(), Detail: map[string]any{"platform": rt.ch.Platform, "external_user": in.User}})
		s.channelBackground(time.Minute, func(ctx context.Context) {
			s.say(ctx, rt, in, "That link code is wrong, used or expired. Issue a new one in opsagent.")
		})
		return nil
	}
	if err != nil {
		return err
	}
	s.audit(c.Context(), AuditEvent{Action: "channel.linked", Outcome: "success", OrgID: rt.ch.OrgID, ProjectID: rt.ch.ProjectID,
		ActorUserID: l.UserID, TargetType: "channel", TargetID: rt.ch.ID, IP: c.ClientIP(),
		Detail: map[string]any{"platform": rt.ch.Platform, "external_user": in.User, "external_name": in.UserName}})
	s.channelBackground(time.Minute, func(ctx context.Context) {
		s.say(ctx, rt, in, "Linked: you act here as your opsagent account, with its role in this project.")
	})
	return nil
}

// channelMessage starts or continues the thread's session with the text.
func (s *Server) channelMessage(c *Ctx, rt *channelRT, in channels.Inbound) error {
	ch := rt.ch
	if strings.TrimSpace(in.Text) == "" {
		return nil
	}
	if len(in.Text) > 32000 {
		in.Text = in.Text[:32000]
	}
	link, err := s.db.FindChannelLink(c.Context(), ch.ID, in.User)
	if err != nil && !store.IsNotFound(err) {
		return err
	}
	userID, limitKey := "", "channel:"+ch.ID+":"+in.User
	if link != nil {
		// The linked account chats with its own role in the project, as in the console.
		if _, err := s.channelActor(c, ch, link, PermSessionsWrite, "POST /api/chat"); err != nil {
			return s.refuseInChat(c, rt, in, err, "Your opsagent role in this project does not allow chatting with the agent.")
		}
		userID, limitKey = link.UserID, "user:"+link.UserID
	} else if !rt.cfg.AllowUnlinked {
		if err := s.db.ClaimChannelDelivery(c.Context(), ch.ID, in.DeliveryKey); err != nil {
			return err
		}
		s.channelBackground(time.Minute, func(ctx context.Context) {
			s.notice(ctx, rt, in, "Link your opsagent account first: issue a link code on the project's Channels page and send 'link CODE' here.")
		})
		return nil
	}
	if ok, _ := s.limits.agentTurns.Allow(limitKey); !ok {
		s.channelBackground(time.Minute, func(ctx context.Context) { s.notice(ctx, rt, in, "Too many messages: wait a minute and try again.") })
		return nil
	}
	msg := &store.ChannelMessage{DeliveryKey: in.DeliveryKey,
		Thread: store.ChannelThread{ChannelID: ch.ID, ThreadKey: in.ThreadKey(), Conversation: in.Conversation, Thread: in.Thread},
		Session: &store.AgentSession{OrgID: ch.OrgID, ProjectID: ch.ProjectID, Title: runner.TitleFrom(in.Text), FirstPrompt: in.Text,
			Source: ch.Platform, TriggerSource: store.TriggerManual, CreatedBy: userID}}
	thread, fresh, err := s.db.OpenChannelTurn(c.Context(), msg)
	if err != nil {
		return err
	}
	info := runner.RunInfo{OrgID: ch.OrgID, ProjectID: ch.ProjectID, SessionID: thread.SessionID, UserID: userID,
		Source: ch.Platform, TriggerSource: store.TriggerManual}
	var after int64
	if fresh {
		if err := s.runner.Launch(info, in.Text, msg.Session.AgentType); err != nil {
			return err
		}
		s.audit(c.Context(), AuditEvent{Action: "session.started", Outcome: "success", OrgID: ch.OrgID, ProjectID: ch.ProjectID,
			ActorUserID: userID, TargetType: "session", TargetID: thread.SessionID, IP: c.ClientIP(),
			Detail: map[string]any{"source": ch.Platform, "channel_id": ch.ID, "external_user": in.User}})
	} else {
		t, err := s.runner.Continue(c.Context(), info, in.Text, "")
		if err != nil {
			if store.ErrorCode(err) == store.EConflict {
				s.channelBackground(time.Minute, func(ctx context.Context) {
					s.say(ctx, rt, in, "Still working on the previous message (or waiting for an approval): send this again when it is done.")
				})
				return nil
			}
			return err
		}
		after = t.FirstSeq - 1
	}
	s.startRelay(rt, thread, after)
	return nil
}

// refuseInChat tells the person why (privately where possible) and records
// the refusal; an error other than a refusal is returned.
func (s *Server) refuseInChat(c *Ctx, rt *channelRT, in channels.Inbound, err error, text string) error {
	code := store.ErrorCode(err)
	if code != store.EForbidden && code != store.ENotFound {
		return err
	}
	if e := s.db.ClaimChannelDelivery(c.Context(), rt.ch.ID, in.DeliveryKey); e != nil {
		return e
	}
	s.channelBackground(time.Minute, func(ctx context.Context) { s.notice(ctx, rt, in, text) })
	return nil
}
