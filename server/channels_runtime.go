package server

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/opsagent/opsagent/server/channels"
	slackch "github.com/opsagent/opsagent/server/channels/slack"
	"github.com/opsagent/opsagent/server/channels/telegram"
	"github.com/opsagent/opsagent/server/channels/whatsapp"
	"github.com/opsagent/opsagent/server/ratelimit"
	"github.com/opsagent/opsagent/store"
)

// channelHub keeps each channel's opened credentials and client, so an
// inbound event costs no vault decryption after the first.
type channelHub struct {
	mu  sync.Mutex
	rts map[string]*channelRT
	hc  *http.Client
	// inbound bounds requests per channel before any decryption or hashing.
	inbound *ratelimit.Limiter
	// interval is the least time between two updates of a streaming answer.
	interval time.Duration
	// inboundTotal counts verified inbound events by platform and outcome.
	inboundTotal *prometheus.CounterVec
}

// count notes one inbound event (kind message, decision, comment,
// challenge, ignore; or duplicate, refused, not_allowed).
func (h *channelHub) count(platform, outcome string) {
	h.inboundTotal.WithLabelValues(platform, outcome).Inc()
}

// channelRT is an open channel: its row, settings, secrets and client.
type channelRT struct {
	ch     *store.Channel
	cfg    channelConfig
	creds  ChannelCredentials
	client channels.Client
}

// Inbound requests one channel may make per minute (a busy Slack workspace
// stays far below; a flood is refused before verification costs anything).
const channelInboundPerMinute = 600

func (s *Server) installChannels() {
	interval := s.cfg.ChannelUpdateInterval
	if interval <= 0 {
		interval = time.Second
	}
	s.chans = &channelHub{rts: map[string]*channelRT{}, hc: &http.Client{Timeout: 20 * time.Second},
		inbound: ratelimit.New(channelInboundPerMinute, time.Minute), interval: interval}
	s.chans.inbound.Now = func() time.Time { return s.Now() }
	s.chans.inboundTotal = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "opsagent_channel_inbound_total",
		Help: "Chat platform requests by platform and outcome (message, decision, duplicate, refused, not_allowed, ...)."}, []string{"platform", "outcome"})
	s.metrics.reg.MustRegister(s.chans.inboundTotal)
}

// runtime opens ch (or returns it from the cache while the row is unchanged).
func (h *channelHub) runtime(_ context.Context, s *Server, ch *store.Channel) (*channelRT, error) {
	h.mu.Lock()
	rt := h.rts[ch.ID]
	h.mu.Unlock()
	if rt != nil && rt.ch.UpdatedAt.Equal(ch.UpdatedAt) && rt.ch.CredKeyID == ch.CredKeyID {
		return rt, nil
	}
	creds, err := s.channelCredentials(ch)
	if err != nil {
		return nil, err
	}
	rt = &channelRT{ch: ch, creds: creds}
	_ = json.Unmarshal([]byte(ch.Config), &rt.cfg)
	switch ch.Platform {
	case store.PlatformSlack:
		rt.client = slackch.New(creds.BotToken, s.cfg.SlackAPIURL, h.hc)
	default:
		rt.client = s.otherPlatformClient(ch.Platform, rt)
	}
	h.mu.Lock()
	h.rts[ch.ID] = rt
	h.mu.Unlock()
	return rt, nil
}

// forget drops a channel's cached runtime (after a change or deletion).
func (h *channelHub) forget(id string) {
	h.mu.Lock()
	delete(h.rts, id)
	h.mu.Unlock()
}

// runtimeByID opens a channel by id alone (decisions reflected in chat).
func (s *Server) channelRuntimeByID(ctx context.Context, id string) (*channelRT, error) {
	ch, err := s.db.FindInboundChannel(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.chans.runtime(ctx, s, ch)
}

// allowsChat reports whether the channel's allow-list admits a conversation.
func (rt *channelRT) allowsChat(conversation string) bool {
	if len(rt.cfg.AllowedChatIDs) == 0 {
		return true
	}
	for _, id := range rt.cfg.AllowedChatIDs {
		if id == conversation {
			return true
		}
	}
	return false
}

// say posts a short text reply in a thread, logging (not failing) on error.
func (s *Server) say(ctx context.Context, rt *channelRT, in channels.Inbound, text string) {
	if _, err := rt.client.Post(ctx, in.Conversation, in.Thread, channels.Message{Text: text}); err != nil {
		s.log.Warn("channels: reply not sent", "channel_id", rt.ch.ID, "err", err)
	}
}

// notice tells one person something: privately where the platform can
// (Slack ephemeral), else in the thread.
func (s *Server) notice(ctx context.Context, rt *channelRT, in channels.Inbound, text string) {
	if n, ok := rt.client.(interface {
		Notice(ctx context.Context, conversation, thread, user, text string) error
	}); ok {
		if err := n.Notice(ctx, in.Conversation, in.Thread, in.User, text); err != nil {
			s.log.Warn("channels: notice not sent", "channel_id", rt.ch.ID, "err", err)
		}
		return
	}
	s.say(ctx, rt, in, text)
}

// background runs fn after the request, under the server's stream context
// (ended at shutdown), bounded by d.
func (s *Server) channelBackground(d time.Duration, fn func(ctx context.Context)) {
	go func() {
		ctx, cancel := context.WithTimeout(s.stopping, d)
		defer cancel()
		fn(ctx)
	}()
}

// otherPlatformClient builds the Telegram and WhatsApp clients.
func (s *Server) otherPlatformClient(platform string, rt *channelRT) channels.Client {
	if platform == store.PlatformTelegram {
		return telegram.New(rt.creds.BotToken, s.cfg.TelegramAPIURL, s.chans.hc)
	}
	return whatsapp.New(rt.creds.AccessToken, rt.cfg.PhoneNumberID, s.cfg.WhatsAppAPIURL, s.chans.hc)
}

// channelDeliveryTTL is how long a platform delivery id is remembered:
// Slack retries within minutes, Telegram and WhatsApp within a day.
const channelDeliveryTTL = 7 * 24 * time.Hour

// PurgeChannelDeliveries is the channel-deliveries job: delivery ids older
// than channelDeliveryTTL are forgotten.
func (s *Server) PurgeChannelDeliveries(ctx context.Context) error {
	n, err := s.db.PurgeChannelDeliveries(ctx, s.Now().Add(-channelDeliveryTTL))
	if n > 0 {
		s.log.Info("channels: old delivery ids forgotten", "count", n)
	}
	return err
}
