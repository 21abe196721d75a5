package slack

import (
	"encoding/json"
	"errors"
	"net/url"
	"regexp"
	"strings"

	"github.com/opsagent/opsagent/server/channels"
)

// ErrMalformed: the body is not a Slack payload this bot understands.
var ErrMalformed = errors.New("slack: malformed payload")

// Callback id of the deny-with-comment modal; its private metadata is the
// approval id, the conversation and the card's ts.
const commentCallback = "opsagent_deny_comment"

// eventEnvelope is the Events API body (url_verification and event_callback).
type eventEnvelope struct {
	Type      string `json:"type"`
	Challenge string `json:"challenge"`
	EventID   string `json:"event_id"`
	Event     struct {
		Type        string `json:"type"`
		Subtype     string `json:"subtype"`
		User        string `json:"user"`
		BotID       string `json:"bot_id"`
		Text        string `json:"text"`
		TS          string `json:"ts"`
		ThreadTS    string `json:"thread_ts"`
		Channel     string `json:"channel"`
		ChannelType string `json:"channel_type"`
	} `json:"event"`
}

var mention = regexp.MustCompile(`<@[A-Z0-9]+(\|[^>]*)?>`)

// Parse reads an Events API (JSON) or interactivity (form, payload=) body.
// botUserID, when known, marks the bot's own messages to ignore.
func Parse(contentType string, body []byte, botUserID string) (channels.Inbound, error) {
	if strings.HasPrefix(contentType, "application/x-www-form-urlencoded") {
		return parseInteraction(body)
	}
	var env eventEnvelope
	if err := json.Unmarshal(body, &env); err != nil {
		return channels.Inbound{}, ErrMalformed
	}
	switch env.Type {
	case "url_verification":
		if env.Challenge == "" {
			return channels.Inbound{}, ErrMalformed
		}
		return channels.Inbound{Kind: channels.KindChallenge, Challenge: env.Challenge}, nil
	case "event_callback":
	default:
		return channels.Inbound{Kind: channels.KindIgnore}, nil
	}
	e := env.Event
	if env.EventID == "" || e.Channel == "" {
		return channels.Inbound{}, ErrMalformed
	}
	in := channels.Inbound{Kind: channels.KindIgnore, DeliveryKey: "event:" + env.EventID, Conversation: e.Channel, User: e.User}
	// Bots (this one included) and edits, joins, deletions are not prompts.
	if e.BotID != "" || e.Subtype != "" || e.User == "" || (botUserID != "" && e.User == botUserID) {
		return in, nil
	}
	switch {
	case e.Type == "app_mention":
	case e.Type == "message" && e.ChannelType == "im":
		in.Private = true
	default:
		return in, nil
	}
	in.Kind = channels.KindMessage
	in.Thread = e.ThreadTS
	if in.Thread == "" {
		in.Thread = e.TS // the mention starts a thread: the answer goes there
	}
	in.Text = strings.TrimSpace(mention.ReplaceAllString(e.Text, ""))
	return in, nil
}

// interaction is the part of an interactivity payload the bot reads
// (block_actions and view_submission).
type interaction struct {
	Type string `json:"type"`
	User struct {
		ID       string `json:"id"`
		Name     string `json:"name"`
		Username string `json:"username"`
	} `json:"user"`
	TriggerID string `json:"trigger_id"`
	Channel   struct {
		ID string `json:"id"`
	} `json:"channel"`
	Container struct {
		ChannelID string `json:"channel_id"`
		MessageTS string `json:"message_ts"`
	} `json:"container"`
	Message struct {
		TS       string `json:"ts"`
		ThreadTS string `json:"thread_ts"`
	} `json:"message"`
	Actions []struct {
		ActionID string `json:"action_id"`
		Value    string `json:"value"`
	} `json:"actions"`
	View struct {
		ID              string `json:"id"`
		CallbackID      string `json:"callback_id"`
		PrivateMetadata string `json:"private_metadata"`
		State           struct {
			Values map[string]map[string]struct {
				Value string `json:"value"`
			} `json:"values"`
		} `json:"state"`
	} `json:"view"`
}

func parseInteraction(body []byte) (channels.Inbound, error) {
	form, err := url.ParseQuery(string(body))
	if err != nil || form.Get("payload") == "" {
		return channels.Inbound{}, ErrMalformed
	}
	var cb interaction
	if err := json.Unmarshal([]byte(form.Get("payload")), &cb); err != nil {
		return channels.Inbound{}, ErrMalformed
	}
	name := cb.User.Name
	if name == "" {
		name = cb.User.Username
	}
	in := channels.Inbound{Kind: channels.KindIgnore, User: cb.User.ID, UserName: name, TriggerID: cb.TriggerID}
	switch cb.Type {
	case "block_actions":
		if len(cb.Actions) == 0 {
			return in, nil
		}
		act := cb.Actions[0]
		in.Conversation, in.MessageRef = cb.Channel.ID, cb.Message.TS
		if in.Conversation == "" {
			in.Conversation, in.MessageRef = cb.Container.ChannelID, cb.Container.MessageTS
		}
		in.Thread = cb.Message.ThreadTS
		in.DeliveryKey = "action:" + cb.TriggerID
		switch act.ActionID {
		case "approve":
			in.Kind, in.Decision, in.ApprovalID = channels.KindDecision, channels.Approve, act.Value
		case "deny":
			in.Kind, in.Decision, in.ApprovalID = channels.KindDecision, channels.Deny, act.Value
		case "deny_comment":
			in.Kind, in.ApprovalID = channels.KindCommentUI, act.Value
		}
	case "view_submission":
		if cb.View.CallbackID != commentCallback {
			return in, nil
		}
		parts := strings.SplitN(cb.View.PrivateMetadata, "|", 3)
		if len(parts) != 3 {
			return channels.Inbound{}, ErrMalformed
		}
		in.Kind, in.Decision, in.ApprovalID = channels.KindDecision, channels.Deny, parts[0]
		in.Conversation, in.MessageRef = parts[1], parts[2]
		in.DeliveryKey = "view:" + cb.View.ID
		if v, ok := cb.View.State.Values["comment"]["comment"]; ok {
			in.Comment = v.Value
		}
	}
	return in, nil
}
