// Package telegram is the Telegram side of chat channels over plain HTTP:
// the webhook's secret_token, Update parsing (messages in private chats,
// mentions and replies in groups, callback queries of inline keyboards) and
// the Bot API calls the bot makes. Plain HTTP rather than a client library:
// five methods, and nothing added to the binary.
package telegram

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/opsagent/opsagent/server/channels"
)

// SecretHeader carries the secret_token given to setWebhook.
const SecretHeader = "X-Telegram-Bot-Api-Secret-Token"

// ErrBadSecret: the request does not carry the channel's secret_token.
var ErrBadSecret = errors.New("telegram: wrong or missing secret token")

// ErrMalformed: the body is not a Telegram Update.
var ErrMalformed = errors.New("telegram: malformed update")

// Verify compares the secret_token header in constant time.
func Verify(h http.Header, secret string) error {
	got := h.Get(SecretHeader)
	if secret == "" || subtle.ConstantTimeCompare([]byte(got), []byte(secret)) != 1 {
		return ErrBadSecret
	}
	return nil
}

type user struct {
	ID        int64  `json:"id"`
	IsBot     bool   `json:"is_bot"`
	FirstName string `json:"first_name"`
	Username  string `json:"username"`
}

type chat struct {
	ID   int64  `json:"id"`
	Type string `json:"type"` // private, group, supergroup, channel
}

type message struct {
	MessageID       int64    `json:"message_id"`
	MessageThreadID int64    `json:"message_thread_id"`
	IsTopicMessage  bool     `json:"is_topic_message"`
	From            *user    `json:"from"`
	Chat            chat     `json:"chat"`
	Text            string   `json:"text"`
	ReplyTo         *message `json:"reply_to_message"`
}

type update struct {
	UpdateID      *int64   `json:"update_id"`
	Message       *message `json:"message"`
	CallbackQuery *struct {
		ID      string   `json:"id"`
		From    user     `json:"from"`
		Message *message `json:"message"`
		Data    string   `json:"data"`
	} `json:"callback_query"`
}

// Parse reads an Update. botUsername (without @), when known, is how the
// bot is mentioned in groups; there it answers mentions and replies to its
// own messages only.
func Parse(body []byte, botUsername string) (channels.Inbound, error) {
	var u update
	if err := json.Unmarshal(body, &u); err != nil || u.UpdateID == nil {
		return channels.Inbound{}, ErrMalformed
	}
	in := channels.Inbound{Kind: channels.KindIgnore, DeliveryKey: "update:" + strconv.FormatInt(*u.UpdateID, 10)}
	if cq := u.CallbackQuery; cq != nil {
		if cq.Message == nil {
			return in, nil
		}
		in.User, in.UserName, in.CallbackID = strconv.FormatInt(cq.From.ID, 10), name(&cq.From), cq.ID
		in.Conversation, in.MessageRef = strconv.FormatInt(cq.Message.Chat.ID, 10), strconv.FormatInt(cq.Message.MessageID, 10)
		if cq.Message.IsTopicMessage {
			in.Thread = strconv.FormatInt(cq.Message.MessageThreadID, 10)
		}
		if d, id, ok := channels.ParseButtonData(cq.Data); ok {
			in.Kind, in.Decision, in.ApprovalID = channels.KindDecision, d, id
			if d == channels.Comment {
				in.Kind, in.Decision = channels.KindCommentUI, ""
			}
		}
		return in, nil
	}
	m := u.Message
	if m == nil || m.From == nil || m.From.IsBot || m.Text == "" {
		return in, nil // edits, channel posts, joins, stickers, other bots
	}
	in.User, in.UserName = strconv.FormatInt(m.From.ID, 10), name(m.From)
	in.Conversation = strconv.FormatInt(m.Chat.ID, 10)
	if m.IsTopicMessage {
		in.Thread = strconv.FormatInt(m.MessageThreadID, 10)
	}
	text := m.Text
	// A reply to the bot's comment prompt is the comment of a denial.
	if r := m.ReplyTo; r != nil && r.From != nil && r.From.IsBot {
		if id, ok := channels.ApprovalOfPrompt(r.Text); ok {
			in.Kind, in.Decision, in.ApprovalID, in.Comment = channels.KindDecision, channels.Deny, id, text
			in.MessageRef = strconv.FormatInt(r.MessageID, 10)
			return in, nil
		}
	}
	if m.Chat.Type == "private" {
		in.Private = true
	} else {
		mention := botUsername != "" && strings.Contains(strings.ToLower(text), "@"+strings.ToLower(botUsername))
		reply := m.ReplyTo != nil && m.ReplyTo.From != nil && m.ReplyTo.From.IsBot &&
			(botUsername == "" || strings.EqualFold(m.ReplyTo.From.Username, botUsername))
		if !mention && !reply {
			return in, nil
		}
		if botUsername != "" {
			text = strings.TrimSpace(replaceFold(text, "@"+botUsername, ""))
		}
	}
	in.Kind, in.Text = channels.KindMessage, text
	return in, nil
}

func name(u *user) string {
	if u.Username != "" {
		return u.Username
	}
	return u.FirstName
}

// replaceFold removes every case-insensitive occurrence of old.
func replaceFold(s, old, repl string) string {
	lo, lold := strings.ToLower(s), strings.ToLower(old)
	var b strings.Builder
	for {
		i := strings.Index(lo, lold)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i] + repl)
		s, lo = s[i+len(old):], lo[i+len(old):]
	}
}
