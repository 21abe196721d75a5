package server

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/opsagent/opsagent/server/channels"
	"github.com/opsagent/opsagent/store"
)

// channelActor is the linked account acting through a chat, checked exactly
// as the console checks a person: the account's role in the channel's org
// must grant perm, the project must be visible to it, and an explicit
// project role caps the org role (projectFor). Refusals are audited like
// the console's. The returned Ctx decides and audits as that person.
func (s *Server) channelActor(c *Ctx, ch *store.Channel, link *store.ChannelLink, perm Perm, route string) (*Ctx, error) {
	role, err := s.db.FindRole(c.Context(), ch.OrgID, link.UserID)
	if err != nil {
		return nil, err // no longer a member: not found, like a random org
	}
	ac := &Ctx{W: c.W, R: c.R, srv: s, Route: &Route{Method: http.MethodPost, Path: route, Perm: perm},
		ID: &Identity{UserID: link.UserID, Email: link.UserEmail, OrgID: ch.OrgID, Role: role}}
	if !ac.ID.Can(perm) {
		s.onPermissionDenied(ac)
		return nil, &store.Error{Code: store.EForbidden, Message: "your role does not allow this (" + string(perm) + ")", Reason: "permission_denied"}
	}
	p, err := s.projectFor(ac, ch.ProjectID)
	if err != nil {
		return nil, err
	}
	ac.Project = p
	return ac, nil
}

// channelDecision is a button pressed (or a comment submitted) on an
// approval card: only a linked account whose role may decide approvals
// decides, as itself; the audit names the person and the channel.
func (s *Server) channelDecision(c *Ctx, rt *channelRT, in channels.Inbound) error {
	ch := rt.ch
	if !store.ValidID(in.ApprovalID) {
		return nil
	}
	link, err := s.db.FindChannelLink(c.Context(), ch.ID, in.User)
	if store.IsNotFound(err) {
		s.audit(c.Context(), AuditEvent{Action: "approval.chat_refused", Outcome: "denied", OrgID: ch.OrgID, ProjectID: ch.ProjectID,
			TargetType: "approval", TargetID: in.ApprovalID, IP: c.ClientIP(),
			Detail: map[string]any{"channel": ch.Platform, "channel_id": ch.ID, "external_user": in.User, "reason": "not_linked"}})
		return s.refuseInChat(c, rt, in, store.NotFound("link"), "Only people who linked their opsagent account can decide approvals: issue a link code on the project's Channels page and send 'link CODE' here.")
	}
	if err != nil {
		return err
	}
	ac, err := s.channelActor(c, ch, link, PermApprovals, "POST /api/approvals/{approval_id}/"+orDefault(in.Decision, "deny"))
	if err != nil {
		return s.refuseInChat(c, rt, in, err, "Your opsagent role in this project does not allow deciding approvals.")
	}
	if in.Kind == channels.KindCommentUI {
		if in.CallbackID != "" {
			s.answerCallback(rt, in.CallbackID, true)
		}
		if oc, ok := rt.client.(interface {
			OpenComment(ctx context.Context, in channels.Inbound) error
		}); ok {
			s.channelBackground(time.Minute, func(ctx context.Context) {
				if err := oc.OpenComment(ctx, in); err != nil {
					s.log.Warn("channels: comment dialog not opened", "channel_id", ch.ID, "err", err)
				}
			})
		}
		return nil
	}
	if err := s.db.ClaimChannelDelivery(c.Context(), ch.ID, in.DeliveryKey); err != nil {
		return err
	}
	decision := store.ApprovalApproved
	if in.Decision == channels.Deny {
		decision = store.ApprovalDenied
	}
	_, err = s.decideApproval(ac, in.ApprovalID, decision, in.Comment,
		map[string]any{"channel": ch.Platform, "channel_id": ch.ID, "external_user": in.User, "external_name": in.UserName})
	if err != nil {
		var text string
		switch store.ErrorCode(err) {
		case store.ENotFound:
			text = "That approval does not exist in this project."
		case store.EConflict:
			text = "That approval was already decided or has expired."
		default:
			return err
		}
		s.channelBackground(time.Minute, func(ctx context.Context) { s.notice(ctx, rt, in, text) })
	}
	if in.CallbackID != "" {
		s.answerCallback(rt, in.CallbackID, err == nil)
	}
	return nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// answerCallback stops the platform's spinner on a pressed button (Telegram).
func (s *Server) answerCallback(rt *channelRT, id string, ok bool) {
	ans, has := rt.client.(interface {
		AnswerCallback(ctx context.Context, id, text string) error
	})
	if !has {
		return
	}
	text := "Decided"
	if !ok {
		text = "Not decided"
	}
	s.channelBackground(30*time.Second, func(ctx context.Context) { _ = ans.AnswerCallback(ctx, id, text) })
}

// approvalCard is an approval as the chat card shows it.
func (s *Server) approvalCard(ctx context.Context, a *store.Approval) *channels.Approval {
	card := &channels.Approval{ID: a.ID, Title: a.Title, Reason: a.Reason, Status: a.Status, Comment: a.Comment}
	var subj ToolCallSubject
	if json.Unmarshal([]byte(a.Subject), &subj) == nil && subj.Command != "" {
		card.Command = truncateText(subj.Command, 500)
	}
	if a.DecidedBy != "" {
		if u, err := s.db.FindUserByID(ctx, a.DecidedBy); err == nil {
			card.DecidedBy = u.Email
		}
	}
	return card
}

// approvalDecidedInChat updates every chat card of a decided approval
// (decided in the console, the API, MCP, another channel or this one), and
// relays the turn the decision resumed to the session's chat thread.
func (s *Server) approvalDecidedInChat(a *store.Approval) {
	if s.chans == nil {
		return
	}
	s.ruleApprovedToChat(context.Background(), a)
	s.channelBackground(2*time.Minute, func(ctx context.Context) {
		card := s.approvalCard(ctx, a)
		msgs, err := s.db.FindChannelApprovalMessages(ctx, a.OrgID, a.ID)
		if err != nil {
			s.log.Warn("channels: approval cards not read", "approval_id", a.ID, "err", err)
		}
		for _, m := range msgs {
			rt, err := s.channelRuntimeByID(ctx, m.ChannelID)
			if err != nil {
				continue
			}
			s.updateCard(ctx, rt, m, card)
		}
		if a.SessionID == "" {
			return
		}
		thread, err := s.db.FindChannelThreadBySession(ctx, a.SessionID)
		if err != nil {
			return
		}
		rt, err := s.channelRuntimeByID(ctx, thread.ChannelID)
		if err != nil {
			return
		}
		first, live := s.runner.LiveTurnStart(a.SessionID)
		if !live {
			if first, err = s.db.LastTurnStart(ctx, a.SessionID); err != nil || first == 0 {
				return
			}
		}
		s.startRelay(rt, thread, first-1)
	})
}

// updateCard shows a decided approval on one chat card: edited in place, or
// (WhatsApp, which cannot edit) as a new message inside the 24-hour window.
func (s *Server) updateCard(ctx context.Context, rt *channelRT, m store.ChannelApprovalMessage, card *channels.Approval) {
	err := rt.client.Update(ctx, m.Conversation, m.MessageRef, channels.Message{Approval: card})
	if err == channels.ErrCannotEdit {
		if !s.withinWindow(ctx, rt, m.Conversation) {
			return
		}
		_, err = rt.client.Post(ctx, m.Conversation, "", channels.Message{Text: card.Summary()})
	}
	if err != nil {
		s.log.Warn("channels: approval card not updated", "channel_id", rt.ch.ID, "approval_id", card.ID, "err", err)
	}
}

// expiredInChat redraws the chat cards of approvals (other than tool calls)
// the expiry pass begun at since expired.
func (s *Server) expiredInChat(ctx context.Context, since time.Time) {
	if s.chans == nil {
		return
	}
	as, err := s.db.FindCardApprovalsExpiredSince(ctx, since)
	if err != nil {
		s.log.Warn("channels: expired approvals' cards not read", "err", err)
	}
	for i := range as {
		s.approvalDecidedInChat(&as[i])
	}
}
