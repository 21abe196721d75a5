package server

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/opsagent/opsagent/server/agent/runner"
	"github.com/opsagent/opsagent/server/channels"
	"github.com/opsagent/opsagent/server/investigate"
	"github.com/opsagent/opsagent/store"
)

// "investigate" from a chat channel (issue 36): the same investigation the
// console's Investigate button starts (a session tied to the incident, its
// evidence pack before the first model call, the method prompt), in the
// thread where it was asked, whose relay shows the answer and where the
// finding is posted. The incident must belong to the channel's project.

// investigateCommand matches "investigate <incident id>", "/investigate
// <id>" (Telegram, with an optional @bot), "opsagent investigate <id>" and
// "/opsagent investigate <id>"; the id may be left out in a thread whose
// session already investigates an incident. Anything longer ("investigate
// why the disk fills") is a question for the agent, not this command.
var investigateCommand = regexp.MustCompile(`(?i)^/?(?:opsagent\s+)?investigate(?:@\S+)?(?:\s+(\S+))?\s*$`)

const investigateUsage = "Send `investigate <incident id>` (the id is on the incident's page and in `opsagent incidents list`)."

// channelInvestigate starts an investigation of the incident ref names (or
// of the thread's incident when ref is empty). An unknown incident, or one
// of another project, gets a reply and starts nothing.
func (s *Server) channelInvestigate(c *Ctx, rt *channelRT, in channels.Inbound, ref string) error {
	ch := rt.ch
	ctx := c.Context()
	link, err := s.db.FindChannelLink(ctx, ch.ID, in.User)
	if err != nil && !store.IsNotFound(err) {
		return err
	}
	userID, limitKey := "", "channel:"+ch.ID+":"+in.User
	if link != nil {
		// The linked account investigates with its own role, as in the console.
		if _, err := s.channelActor(c, ch, link, PermSessionsWrite, "POST /api/incidents/{incident_id}/investigate"); err != nil {
			return s.refuseInChat(c, rt, in, err, "Your opsagent role in this project does not allow starting an investigation.")
		}
		userID, limitKey = link.UserID, "user:"+link.UserID
	} else if !rt.cfg.AllowUnlinked {
		return s.replyOnce(c, rt, in, true, "Link your opsagent account first: issue a link code on the project's Channels page and send 'link CODE' here.")
	}

	inc, why, err := s.chatIncident(ctx, ch, in, ref)
	if err != nil {
		return err
	}
	if inc == nil {
		return s.replyOnce(c, rt, in, false, why)
	}
	if ok, _ := s.limits.agentTurns.Allow(limitKey); !ok {
		return s.replyOnce(c, rt, in, true, "Too many messages: wait a minute and try again.")
	}

	const typ = "sre"
	prompt := investigationPrompt(inc, "")
	thread, err := s.db.OpenChannelInvestigation(ctx, &store.ChannelMessage{DeliveryKey: in.DeliveryKey,
		Thread: store.ChannelThread{ChannelID: ch.ID, ThreadKey: in.ThreadKey(), Conversation: in.Conversation, Thread: in.Thread},
		Session: &store.AgentSession{OrgID: ch.OrgID, ProjectID: ch.ProjectID, Title: runner.TitleFrom("Investigate " + inc.Title),
			FirstPrompt: prompt, AgentType: typ, Source: ch.Platform, TriggerSource: store.TriggerManual, CreatedBy: userID}})
	if err != nil {
		return err
	}
	info := runner.RunInfo{OrgID: ch.OrgID, ProjectID: ch.ProjectID, SessionID: thread.SessionID, UserID: userID,
		Source: ch.Platform, TriggerSource: store.TriggerManual}
	if err := s.launchInvestigation(ctx, info, inc, prompt, typ); err != nil {
		return err
	}
	s.audit(ctx, AuditEvent{Action: "incident.investigated", Outcome: "success", OrgID: ch.OrgID, ProjectID: ch.ProjectID,
		ActorUserID: userID, TargetType: "incident", TargetID: inc.ID, IP: c.ClientIP(),
		Detail: map[string]any{"session_id": thread.SessionID, "source": ch.Platform, "channel_id": ch.ID, "external_user": in.User}})
	s.startRelay(rt, thread, 0)
	return nil
}

// chatIncident finds the incident a chat command names, in the channel's
// project only; nil with the reason to give when there is none.
func (s *Server) chatIncident(ctx context.Context, ch *store.Channel, in channels.Inbound, ref string) (*store.Incident, string, error) {
	if ref == "" {
		t, err := s.db.FindChannelThread(ctx, ch.ID, in.ThreadKey())
		if store.IsNotFound(err) {
			return nil, "Which incident? " + investigateUsage, nil
		}
		if err != nil {
			return nil, "", err
		}
		inc, err := s.db.IncidentBySession(ctx, ch.OrgID, ch.ProjectID, t.SessionID)
		if store.IsNotFound(err) {
			return nil, "This thread is not about an incident. " + investigateUsage, nil
		}
		return inc, "", err
	}
	ref = strings.Trim(ref, "`<>")
	if !store.ValidID(ref) {
		return nil, "`" + truncateText(ref, 60) + "` is not an incident id: nothing was started. " + investigateUsage, nil
	}
	// Scoped to the channel's project: another project's incident reads as
	// unknown here, as it does in the API.
	inc, _, err := s.db.FindIncident(ctx, ch.OrgID, ch.ProjectID, ref)
	if store.IsNotFound(err) {
		return nil, "No incident " + ref + " in this channel's project: nothing was started.", nil
	}
	return inc, "", err
}

// replyOnce claims the delivery (a platform retry is not answered twice)
// and answers in the thread, or privately where the platform can when
// private is set.
func (s *Server) replyOnce(c *Ctx, rt *channelRT, in channels.Inbound, private bool, text string) error {
	if err := s.db.ClaimChannelDelivery(c.Context(), rt.ch.ID, in.DeliveryKey); err != nil {
		return err
	}
	s.channelBackground(time.Minute, func(ctx context.Context) {
		if private {
			s.notice(ctx, rt, in, text)
		} else {
			s.say(ctx, rt, in, text)
		}
	})
	return nil
}

// evidenceLine is an evidence pack as one chat line, as the CLI folds it.
func evidenceLine(p *investigate.Pack) string {
	count := map[string]int{}
	var order []string
	for _, it := range p.Items {
		if count[it.Source] == 0 {
			order = append(order, it.Source)
		}
		count[it.Source]++
	}
	parts := make([]string, len(order))
	for i, src := range order {
		parts[i] = fmt.Sprintf("%s %d", src, count[src])
	}
	line := fmt.Sprintf("🔎 Evidence: %d items (%s), about %d tokens", len(p.Items), strings.Join(parts, ", "), p.Tokens)
	for _, f := range p.Failed {
		line += fmt.Sprintf("; %s failed: %s", f.Source, f.Reason)
	}
	return line
}
