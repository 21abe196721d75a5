package server

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"strings"
	"time"

	"github.com/opsagent/opsagent/store"
)

// Chat channels (Slack, Telegram, WhatsApp): a project's connections, managed
// here; inbound platform requests in channels_inbound.go; the answer relayed
// to the chat in channels_relay.go; approvals in chat in channels_decide.go.

// ChannelCredentials are a channel's platform secrets, kept in the vault and
// never returned. Which ones a platform needs: slack bot_token and
// signing_secret; telegram bot_token (secret_token generated when absent);
// whatsapp access_token, app_secret (verify_token generated when absent).
type ChannelCredentials struct {
	BotToken      string `json:"bot_token" validate:"max=512"`
	SigningSecret string `json:"signing_secret" validate:"max=256"`
	SecretToken   string `json:"secret_token" validate:"max=256,pattern=^[A-Za-z0-9_-]*$" doc:"telegram: the secret_token given to setWebhook"`
	AccessToken   string `json:"access_token" validate:"max=1024"`
	AppSecret     string `json:"app_secret" validate:"max=256"`
	VerifyToken   string `json:"verify_token" validate:"max=256" doc:"whatsapp: the token of the GET verify handshake"`
}

// channelConfig is a channel's non-secret settings, stored as JSON.
type channelConfig struct {
	AllowUnlinked  bool     `json:"allow_unlinked"`
	AllowedChatIDs []string `json:"allowed_chat_ids"`
	BotUserID      string   `json:"bot_user_id"`
	PhoneNumberID  string   `json:"phone_number_id"`
}

// ChannelCreate is the body of POST /api/channels.
type ChannelCreate struct {
	Platform       string             `json:"platform" validate:"required,oneof=slack telegram whatsapp"`
	Name           string             `json:"name" validate:"required,min=1,max=63,pattern=^[A-Za-z0-9][A-Za-z0-9 ._-]*$"`
	AllowUnlinked  bool               `json:"allow_unlinked" doc:"people who have not linked an account may chat (never approve)"`
	AllowedChatIDs []string           `json:"allowed_chat_ids" validate:"max=100" doc:"only these chats (Slack channel ids, Telegram chat ids, WhatsApp numbers); empty allows every chat"`
	BotUserID      string             `json:"bot_user_id" validate:"max=64" doc:"slack: the bot's user id (filled by test); telegram: the bot's username"`
	PhoneNumberID  string             `json:"phone_number_id" validate:"max=64,pattern=^[0-9]*$" doc:"whatsapp: the business phone number id"`
	Credentials    ChannelCredentials `json:"credentials" validate:"required"`
}

// ChannelUpdate is the body of PATCH /api/channels/{channel_id}.
type ChannelUpdate struct {
	Name           *string             `json:"name" validate:"nonnull,min=1,max=63,pattern=^[A-Za-z0-9][A-Za-z0-9 ._-]*$"`
	Enabled        *bool               `json:"enabled" validate:"nonnull"`
	AllowUnlinked  *bool               `json:"allow_unlinked" validate:"nonnull"`
	AllowedChatIDs *[]string           `json:"allowed_chat_ids" validate:"nonnull,max=100"`
	BotUserID      *string             `json:"bot_user_id" validate:"nonnull,max=64"`
	PhoneNumberID  *string             `json:"phone_number_id" validate:"nonnull,max=64,pattern=^[0-9]*$"`
	Credentials    *ChannelCredentials `json:"credentials" doc:"replaces every credential"`
}

// ChannelOut is a channel (credentials never shown).
type ChannelOut struct {
	ID              string    `json:"id"`
	ProjectID       string    `json:"project_id"`
	Platform        string    `json:"platform"`
	Name            string    `json:"name"`
	Enabled         bool      `json:"enabled"`
	AllowUnlinked   bool      `json:"allow_unlinked"`
	AllowedChatIDs  []string  `json:"allowed_chat_ids"`
	BotUserID       string    `json:"bot_user_id"`
	PhoneNumberID   string    `json:"phone_number_id"`
	InboundURL      string    `json:"inbound_url" doc:"where the platform sends events (Slack request URL, Telegram webhook, WhatsApp callback URL)"`
	SetupSteps      []string  `json:"setup_steps"`
	IgnoredMessages int64     `json:"ignored_messages" doc:"messages from chats the allow-list does not admit"`
	CreatedAt       time.Time `json:"created_at"`
	UpdatedAt       time.Time `json:"updated_at"`
	// Generated is set once, on creation: secrets the server made up that
	// the platform must be told (telegram secret_token, whatsapp verify_token).
	Generated map[string]string `json:"generated,omitempty"`
}

// ChannelList is a project's channels.
type ChannelList struct {
	Items []ChannelOut `json:"items"`
}

// ChannelTestOut is what testing a channel's credentials found.
type ChannelTestOut struct {
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// LinkCodeOut is a one-time link code.
type LinkCodeOut struct {
	Code        string    `json:"code" doc:"send it to the bot (as 'link CODE') from the chat account to link; single use"`
	ExpiresAt   time.Time `json:"expires_at"`
	Instruction string    `json:"instruction"`
}

// ChannelLinkOut is a platform user linked to an account.
type ChannelLinkOut struct {
	ID             string    `json:"id"`
	ExternalUserID string    `json:"external_user_id"`
	ExternalName   string    `json:"external_name"`
	UserID         string    `json:"user_id"`
	UserEmail      string    `json:"user_email"`
	CreatedAt      time.Time `json:"created_at"`
}

// ChannelLinkList lists a channel's linked users.
type ChannelLinkList struct {
	Items []ChannelLinkOut `json:"items"`
}

// linkCodeTTL is how long a link code may be redeemed.
const linkCodeTTL = 15 * time.Minute

// channelRoutes: manage a project's chat channels; the platforms' inbound routes.
func (s *Server) channelRoutes() []*Route {
	tags := []string{"channels"}
	return []*Route{
		{Method: "GET", Path: "/api/channels", Summary: "List the project's chat channels", Tags: tags, Auth: AuthAny, Perm: PermProjectRead, Project: true, Resp: ChannelList{}, Status: 200, Handle: s.handleListChannels},
		{Method: "POST", Path: "/api/channels", Summary: "Connect a chat channel (Slack, Telegram, WhatsApp); credentials go to the vault", Tags: tags, Auth: AuthAny, Perm: PermSecretsWrite, Project: true, Body: ChannelCreate{}, Resp: ChannelOut{}, Status: 201, MaxBody: 32 << 10, Handle: s.handleCreateChannel},
		{Method: "GET", Path: "/api/channels/{channel_id}", Summary: "Read a chat channel with its inbound URL and setup steps", Tags: tags, Auth: AuthAny, Perm: PermProjectRead, Project: true, Resp: ChannelOut{}, Status: 200, Handle: s.handleGetChannel},
		{Method: "PATCH", Path: "/api/channels/{channel_id}", Summary: "Change, enable or disable a chat channel", Tags: tags, Auth: AuthAny, Perm: PermSecretsWrite, Project: true, Body: ChannelUpdate{}, Resp: ChannelOut{}, Status: 200, MaxBody: 32 << 10, Handle: s.handleUpdateChannel},
		{Method: "DELETE", Path: "/api/channels/{channel_id}", Summary: "Delete a chat channel (its sessions stay)", Tags: tags, Auth: AuthAny, Perm: PermSecretsWrite, Project: true, Status: 204, Handle: s.handleDeleteChannel},
		{Method: "POST", Path: "/api/channels/{channel_id}/test", Summary: "Check the channel's credentials against the platform", Tags: tags, Auth: AuthAny, Perm: PermSecretsWrite, Project: true, Resp: ChannelTestOut{}, Status: 200, Handle: s.handleTestChannel},
		{Method: "POST", Path: "/api/channels/{channel_id}/link-codes", Summary: "Issue a one-time code that links my chat account to me", Tags: tags, Auth: AuthHuman, Perm: PermProjectRead, Project: true, Resp: LinkCodeOut{}, Status: 201, Handle: s.handleCreateLinkCode},
		{Method: "GET", Path: "/api/channels/{channel_id}/links", Summary: "List the chat accounts linked to people", Tags: tags, Auth: AuthAny, Perm: PermProjectRead, Project: true, Resp: ChannelLinkList{}, Status: 200, Handle: s.handleListChannelLinks},
		{Method: "DELETE", Path: "/api/channels/{channel_id}/links/{link_id}", Summary: "Unlink a chat account", Tags: tags, Auth: AuthAny, Perm: PermSecretsWrite, Project: true, Status: 204, Handle: s.handleDeleteChannelLink},
		{Method: "POST", Path: "/api/inbound/slack/{channel_id}", Summary: "Slack Events API and interactivity (signed with the signing secret)", Tags: tags, Auth: AuthNone, Status: 200, MaxBody: channelMaxBody, RawBody: true, Handle: s.handleSlackInbound},
		{Method: "POST", Path: "/api/inbound/telegram/{channel_id}", Summary: "Telegram Bot API webhook (X-Telegram-Bot-Api-Secret-Token)", Tags: tags, Auth: AuthNone, Status: 200, MaxBody: channelMaxBody, RawBody: true, Handle: s.handleTelegramInbound},
		{Method: "GET", Path: "/api/inbound/whatsapp/{channel_id}", Summary: "WhatsApp Cloud API webhook verification (hub.mode, hub.verify_token, hub.challenge)", Tags: tags, Auth: AuthNone, Status: 200, RawBody: true, Handle: s.handleWhatsAppVerify},
		{Method: "POST", Path: "/api/inbound/whatsapp/{channel_id}", Summary: "WhatsApp Cloud API webhook (X-Hub-Signature-256 with the app secret)", Tags: tags, Auth: AuthNone, Status: 200, MaxBody: channelMaxBody, RawBody: true, Handle: s.handleWhatsAppInbound},
	}
}

// channelMaxBody caps an inbound platform request: chat payloads are a few KB.
const channelMaxBody = 256 << 10

func (s *Server) channelOut(c *Ctx, ch *store.Channel) ChannelOut {
	var cfg channelConfig
	_ = json.Unmarshal([]byte(ch.Config), &cfg)
	if cfg.AllowedChatIDs == nil {
		cfg.AllowedChatIDs = []string{}
	}
	base := strings.TrimRight(s.cfg.BaseURL, "/")
	if base == "" {
		scheme := "http"
		if c.R.TLS != nil {
			scheme = "https"
		}
		base = scheme + "://" + c.R.Host
	}
	url := base + "/api/inbound/" + ch.Platform + "/" + ch.ID
	return ChannelOut{ID: ch.ID, ProjectID: ch.ProjectID, Platform: ch.Platform, Name: ch.Name, Enabled: ch.Enabled,
		AllowUnlinked: cfg.AllowUnlinked, AllowedChatIDs: cfg.AllowedChatIDs, BotUserID: cfg.BotUserID, PhoneNumberID: cfg.PhoneNumberID,
		InboundURL: url, SetupSteps: setupSteps(ch.Platform, url), IgnoredMessages: ch.Ignored, CreatedAt: ch.CreatedAt, UpdatedAt: ch.UpdatedAt}
}

// setupSteps is what to do on the platform's side, per platform.
func setupSteps(platform, url string) []string {
	switch platform {
	case store.PlatformSlack:
		return []string{
			"Create a Slack app (api.slack.com/apps) and add the bot scopes app_mentions:read, chat:write, im:history.",
			"Event Subscriptions: enable, set the Request URL to " + url + " and subscribe to the bot events app_mention and message.im.",
			"Interactivity & Shortcuts: enable and set the Request URL to " + url + " (approval buttons and the comment modal).",
			"Install the app to the workspace; store its Bot User OAuth Token (xoxb-) and Signing Secret in this channel's credentials.",
			"Press Test: it checks the token and records the bot's user id. Each person sends 'link CODE' to the bot, with a code from Link my account on this project's Channels page.",
		}
	case store.PlatformTelegram:
		return []string{
			"Create a bot with @BotFather and store its token in this channel's credentials.",
			"Register the webhook: curl -d url=" + url + " -d secret_token=SECRET https://api.telegram.org/bot<TOKEN>/setWebhook (SECRET: this channel's secret_token).",
			"In groups, people mention the bot or reply to it; add group chat ids to the allow-list to restrict where it answers.",
			"Each person sends '/link CODE' to the bot with a code issued here.",
		}
	case store.PlatformWhatsApp:
		return []string{
			"In the Meta app dashboard, add the WhatsApp product; note the phone number id and create a permanent access token.",
			"Webhooks: set the Callback URL to " + url + " and the Verify token to this channel's verify_token; subscribe to the messages field.",
			"Store the access token and the app secret (App settings > Basic) in this channel's credentials.",
			"WhatsApp allows free-form replies only within 24 hours of the person's last message: answers and approvals later than that are not sent.",
		}
	}
	return nil
}

// randomToken is a URL-safe random secret of n bytes.
func randomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return strings.TrimRight(base32.StdEncoding.EncodeToString(b), "=")
}

// checkCredentials says which credentials a platform needs, filling
// generated ones.
func checkCredentials(platform string, cr *ChannelCredentials, generated map[string]string) error {
	need := func(v, name string) error {
		if strings.TrimSpace(v) == "" {
			return invalid("required for "+platform, "missing", "body", "credentials", name)
		}
		return nil
	}
	switch platform {
	case store.PlatformSlack:
		if err := need(cr.BotToken, "bot_token"); err != nil {
			return err
		}
		return need(cr.SigningSecret, "signing_secret")
	case store.PlatformTelegram:
		if cr.SecretToken == "" {
			cr.SecretToken = randomToken(24)
			generated["secret_token"] = cr.SecretToken
		}
		return need(cr.BotToken, "bot_token")
	case store.PlatformWhatsApp:
		if cr.VerifyToken == "" {
			cr.VerifyToken = randomToken(24)
			generated["verify_token"] = cr.VerifyToken
		}
		if err := need(cr.AccessToken, "access_token"); err != nil {
			return err
		}
		return need(cr.AppSecret, "app_secret")
	}
	return nil
}
