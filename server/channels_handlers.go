package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/opsagent/opsagent/store"
)

// channelAAD binds a channel's credentials ciphertext to its row.
func channelAAD(id string) string { return "channel:" + id + ":credentials" }

func (s *Server) sealCredentials(cr ChannelCredentials) store.Sealer {
	return func(id string) ([]byte, string, error) {
		b, err := json.Marshal(cr)
		if err != nil {
			return nil, "", err
		}
		return s.secrets.Seal(channelAAD(id), b)
	}
}

// handleListChannels is GET /api/channels.
func (s *Server) handleListChannels(c *Ctx) error {
	chs, err := s.db.FindChannels(c.Context(), c.OrgID(), c.ProjectID())
	if err != nil {
		return err
	}
	out := ChannelList{Items: make([]ChannelOut, 0, len(chs))}
	for i := range chs {
		out.Items = append(out.Items, s.channelOut(c, &chs[i]))
	}
	return c.JSON(200, out)
}

// handleCreateChannel is POST /api/channels.
func (s *Server) handleCreateChannel(c *Ctx) error {
	var req ChannelCreate
	if err := c.Bind(&req); err != nil {
		return err
	}
	generated := map[string]string{}
	if err := checkCredentials(req.Platform, &req.Credentials, generated); err != nil {
		return err
	}
	if req.Platform == store.PlatformWhatsApp && req.PhoneNumberID == "" {
		return invalid("required for whatsapp", "missing", "body", "phone_number_id")
	}
	cfg := channelConfig{AllowUnlinked: req.AllowUnlinked, AllowedChatIDs: cleanIDs(req.AllowedChatIDs), BotUserID: req.BotUserID, PhoneNumberID: req.PhoneNumberID}
	b, _ := json.Marshal(cfg)
	ch := &store.Channel{OrgID: c.OrgID(), ProjectID: c.ProjectID(), Platform: req.Platform, Name: req.Name, Enabled: true,
		Config: string(b), CreatedBy: c.ID.UserID}
	if err := s.db.CreateChannel(c.Context(), ch, s.sealCredentials(req.Credentials)); err != nil {
		return err
	}
	c.Audit("channel.created", "success", "channel", ch.ID, map[string]any{"platform": ch.Platform, "name": ch.Name})
	out := s.channelOut(c, ch)
	if len(generated) > 0 {
		out.Generated = generated
	}
	return c.JSON(201, out)
}

func cleanIDs(ids []string) []string {
	out := []string{}
	for _, id := range ids {
		if id = strings.TrimSpace(id); id != "" {
			out = append(out, id)
		}
	}
	return out
}

// handleGetChannel is GET /api/channels/{channel_id}.
func (s *Server) handleGetChannel(c *Ctx) error {
	ch, err := s.channelParam(c)
	if err != nil {
		return err
	}
	return c.JSON(200, s.channelOut(c, ch))
}

func (s *Server) channelParam(c *Ctx) (*store.Channel, error) {
	id, err := c.IDParam("channel_id")
	if err != nil {
		return nil, err
	}
	return s.db.FindChannel(c.Context(), c.OrgID(), c.ProjectID(), id)
}

// handleUpdateChannel is PATCH /api/channels/{channel_id}.
func (s *Server) handleUpdateChannel(c *Ctx) error {
	ch, err := s.channelParam(c)
	if err != nil {
		return err
	}
	var req ChannelUpdate
	if err := c.Bind(&req); err != nil {
		return err
	}
	var cfg channelConfig
	_ = json.Unmarshal([]byte(ch.Config), &cfg)
	if req.AllowUnlinked != nil {
		cfg.AllowUnlinked = *req.AllowUnlinked
	}
	if req.AllowedChatIDs != nil {
		cfg.AllowedChatIDs = cleanIDs(*req.AllowedChatIDs)
	}
	if req.BotUserID != nil {
		cfg.BotUserID = *req.BotUserID
	}
	if req.PhoneNumberID != nil {
		cfg.PhoneNumberID = *req.PhoneNumberID
	}
	b, _ := json.Marshal(cfg)
	conf := string(b)
	var seal store.Sealer
	generated := map[string]string{}
	if req.Credentials != nil {
		if err := checkCredentials(ch.Platform, req.Credentials, generated); err != nil {
			return err
		}
		seal = s.sealCredentials(*req.Credentials)
	}
	ch, err = s.db.UpdateChannel(c.Context(), c.OrgID(), c.ProjectID(), ch.ID, store.ChannelPatch{Name: req.Name, Enabled: req.Enabled, Config: &conf}, seal)
	if err != nil {
		return err
	}
	s.chans.forget(ch.ID)
	c.Audit("channel.updated", "success", "channel", ch.ID, map[string]any{"platform": ch.Platform, "enabled": ch.Enabled, "credentials_replaced": seal != nil})
	out := s.channelOut(c, ch)
	if len(generated) > 0 {
		out.Generated = generated
	}
	return c.JSON(200, out)
}

// handleDeleteChannel is DELETE /api/channels/{channel_id}.
func (s *Server) handleDeleteChannel(c *Ctx) error {
	id, err := c.IDParam("channel_id")
	if err != nil {
		return err
	}
	if err := s.db.DeleteChannel(c.Context(), c.OrgID(), c.ProjectID(), id); err != nil {
		return err
	}
	s.chans.forget(id)
	c.Audit("channel.deleted", "success", "channel", id, nil)
	return c.NoContent()
}

// handleTestChannel is POST /api/channels/{channel_id}/test: the platform is
// asked who the bot is; Slack's answer (the bot's user id) is kept, so the
// bot ignores its own messages.
func (s *Server) handleTestChannel(c *Ctx) error {
	ch, err := s.channelParam(c)
	if err != nil {
		return err
	}
	rt, err := s.chans.runtime(c.Context(), s, ch)
	if err != nil {
		return err
	}
	who, err := rt.client.Check(c.Context())
	if err != nil {
		c.Audit("channel.tested", "failure", "channel", ch.ID, map[string]any{"platform": ch.Platform})
		return c.JSON(200, ChannelTestOut{OK: false, Detail: truncateText(err.Error(), 300)})
	}
	if who != "" && who != rt.cfg.BotUserID && ch.Platform != store.PlatformWhatsApp {
		rt.cfg.BotUserID = who
		b, _ := json.Marshal(rt.cfg)
		conf := string(b)
		if _, err := s.db.UpdateChannel(c.Context(), c.OrgID(), c.ProjectID(), ch.ID, store.ChannelPatch{Config: &conf}, nil); err != nil {
			return err
		}
		s.chans.forget(ch.ID)
	}
	c.Audit("channel.tested", "success", "channel", ch.ID, map[string]any{"platform": ch.Platform})
	return c.JSON(200, ChannelTestOut{OK: true, Detail: "connected as " + who})
}

func linkCodeHash(code string) string {
	h := sha256.Sum256([]byte(strings.ToUpper(strings.TrimSpace(code))))
	return hex.EncodeToString(h[:])
}

// handleCreateLinkCode is POST /api/channels/{channel_id}/link-codes.
func (s *Server) handleCreateLinkCode(c *Ctx) error {
	ch, err := s.channelParam(c)
	if err != nil {
		return err
	}
	code := "OPS-" + randomToken(10)[:12]
	exp := s.Now().Add(linkCodeTTL)
	if err := s.db.CreateChannelLinkCode(c.Context(), c.OrgID(), ch.ID, c.ID.UserID, linkCodeHash(code), exp); err != nil {
		return err
	}
	c.Audit("channel.link_code_issued", "success", "channel", ch.ID, map[string]any{"platform": ch.Platform})
	return c.JSON(201, LinkCodeOut{Code: code, ExpiresAt: exp, Instruction: "send 'link " + code + "' to the bot within 15 minutes"})
}

// handleListChannelLinks is GET /api/channels/{channel_id}/links.
func (s *Server) handleListChannelLinks(c *Ctx) error {
	ch, err := s.channelParam(c)
	if err != nil {
		return err
	}
	ls, err := s.db.FindChannelLinks(c.Context(), c.OrgID(), ch.ID)
	if err != nil {
		return err
	}
	out := ChannelLinkList{Items: make([]ChannelLinkOut, 0, len(ls))}
	for _, l := range ls {
		out.Items = append(out.Items, ChannelLinkOut{ID: l.ID, ExternalUserID: l.ExternalUserID, ExternalName: l.ExternalName,
			UserID: l.UserID, UserEmail: l.UserEmail, CreatedAt: l.CreatedAt})
	}
	return c.JSON(200, out)
}

// handleDeleteChannelLink is DELETE /api/channels/{channel_id}/links/{link_id}.
func (s *Server) handleDeleteChannelLink(c *Ctx) error {
	ch, err := s.channelParam(c)
	if err != nil {
		return err
	}
	id, err := c.IDParam("link_id")
	if err != nil {
		return err
	}
	if err := s.db.DeleteChannelLink(c.Context(), c.OrgID(), ch.ID, id); err != nil {
		return err
	}
	c.Audit("channel.unlinked", "success", "channel_link", id, map[string]any{"channel_id": ch.ID})
	return c.NoContent()
}

// channelCredentials opens a channel's credentials.
func (s *Server) channelCredentials(ch *store.Channel) (ChannelCredentials, error) {
	var cr ChannelCredentials
	pt, err := s.secrets.Unseal(channelAAD(ch.ID), ch.Credentials)
	if err != nil {
		return cr, err
	}
	err = json.Unmarshal(pt, &cr)
	return cr, err
}

var _ = context.Background
