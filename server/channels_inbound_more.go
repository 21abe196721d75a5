package server

import (
	"net/http"

	"github.com/opsagent/opsagent/server/channels"
	"github.com/opsagent/opsagent/server/channels/telegram"
	"github.com/opsagent/opsagent/server/channels/whatsapp"
	"github.com/opsagent/opsagent/store"
)

// handleTelegramInbound is POST /api/inbound/telegram/{channel_id}: one
// Update, authenticated by the secret_token given to setWebhook.
func (s *Server) handleTelegramInbound(c *Ctx) error {
	rt, body, err := s.inboundChannel(c, store.PlatformTelegram)
	if err != nil {
		return err
	}
	if err := telegram.Verify(c.R.Header, rt.creds.SecretToken); err != nil {
		return s.rejectInbound(c, rt, "bad_secret_token")
	}
	in, err := telegram.Parse(body, rt.cfg.BotUserID)
	if err != nil {
		return invalid("not a Telegram Update", "value_error", "body")
	}
	if err := s.channelDispatch(c, rt, in); err != nil {
		return err
	}
	return c.JSON(200, map[string]bool{"ok": true})
}

// WhatsAppVerifyQuery is the GET handshake Meta sends when the callback URL is set.
type WhatsAppVerifyQuery struct {
	Mode        string `query:"hub.mode" validate:"max=64"`
	VerifyToken string `query:"hub.verify_token" validate:"max=256"`
	Challenge   string `query:"hub.challenge" validate:"max=256"`
}

// handleWhatsAppVerify is GET /api/inbound/whatsapp/{channel_id}: answers
// hub.challenge when hub.verify_token is the channel's (403 otherwise).
func (s *Server) handleWhatsAppVerify(c *Ctx) error {
	rt, _, err := s.inboundChannel(c, store.PlatformWhatsApp)
	if err != nil {
		return err
	}
	q := c.R.URL.Query()
	challenge, err := whatsapp.VerifyHandshake(q.Get("hub.mode"), q.Get("hub.verify_token"), q.Get("hub.challenge"), rt.creds.VerifyToken)
	if err != nil {
		s.log.Warn("channels: WhatsApp verification refused", "channel_id", rt.ch.ID, "ip", c.ClientIP())
		return forbidden("hub.verify_token is not this channel's verify token")
	}
	c.W.Header().Set("Content-Type", "text/plain; charset=utf-8")
	c.W.WriteHeader(http.StatusOK)
	_, _ = c.W.Write([]byte(challenge))
	return nil
}

// handleWhatsAppInbound is POST /api/inbound/whatsapp/{channel_id}: a
// notification (possibly several messages), signed with the app secret.
func (s *Server) handleWhatsAppInbound(c *Ctx) error {
	rt, body, err := s.inboundChannel(c, store.PlatformWhatsApp)
	if err != nil {
		return err
	}
	if err := whatsapp.Verify(c.R.Header, body, rt.creds.AppSecret); err != nil {
		return s.rejectInbound(c, rt, "bad_signature")
	}
	ins, err := whatsapp.Parse(body, rt.cfg.PhoneNumberID)
	if err != nil {
		return invalid("not a WhatsApp Cloud API notification", "value_error", "body")
	}
	for _, in := range ins {
		if err := s.channelDispatch(c, rt, in); err != nil {
			return err
		}
	}
	return c.JSON(200, map[string]bool{"ok": true})
}

var _ = channels.KindIgnore
