package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/opsagent/opsagent/server/channels"
)

// DefaultAPIURL is Slack's Web API.
const DefaultAPIURL = "https://slack.com/api/"

// Client is a bot's Web API client (chat.postMessage, chat.update,
// chat.postEphemeral, views.open, auth.test).
type Client struct {
	base  string
	token string
	hc    *http.Client
}

// New returns a client for botToken against apiURL (DefaultAPIURL when "").
func New(botToken, apiURL string, hc *http.Client) *Client {
	if apiURL == "" {
		apiURL = DefaultAPIURL
	}
	return &Client{base: strings.TrimRight(apiURL, "/") + "/", token: botToken, hc: hc}
}

// response is the envelope of every Web API answer.
type response struct {
	OK     bool   `json:"ok"`
	Error  string `json:"error"`
	TS     string `json:"ts"`
	UserID string `json:"user_id"`
}

// call posts a method, form-encoded (chat.*, auth.test) or as JSON
// (views.open), with the bot token as bearer, retrying per channels.Do.
func (c *Client) call(ctx context.Context, method string, form url.Values, js any) (*response, error) {
	var body []byte
	ctype := "application/x-www-form-urlencoded"
	if js != nil {
		var err error
		if body, err = json.Marshal(js); err != nil {
			return nil, err
		}
		ctype = "application/json; charset=utf-8"
	} else {
		body = []byte(form.Encode())
	}
	var out response
	err := channels.Do(ctx, func() error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+method, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", ctype)
		req.Header.Set("Authorization", "Bearer "+c.token)
		res, err := c.hc.Do(req)
		if err != nil {
			return &channels.Temporary{Err: fmt.Errorf("slack %s: %w", method, err)}
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		switch {
		case res.StatusCode == http.StatusTooManyRequests:
			return &channels.RateLimited{RetryAfter: channels.RetryAfter(res.Header.Get("Retry-After"), channels.BaseBackoff)}
		case res.StatusCode >= 500:
			return &channels.Temporary{Err: fmt.Errorf("slack %s: %s", method, res.Status)}
		case res.StatusCode != http.StatusOK:
			return fmt.Errorf("slack %s: %s", method, res.Status)
		}
		out = response{}
		if err := json.Unmarshal(raw, &out); err != nil {
			return fmt.Errorf("slack %s: unreadable answer", method)
		}
		if !out.OK {
			if out.Error == "ratelimited" {
				return &channels.RateLimited{RetryAfter: channels.BaseBackoff}
			}
			return fmt.Errorf("slack %s: %s", method, out.Error)
		}
		return nil
	})
	return &out, err
}

// textLimit keeps a message inside a section block's 3000 characters.
const textLimit = 2900

type obj = map[string]any

func textObj(typ, text string) obj { return obj{"type": typ, "text": text} }

func button(actionID, value, text, style string) obj {
	b := obj{"type": "button", "action_id": actionID, "value": value, "text": textObj("plain_text", text)}
	if style != "" {
		b["style"] = style
	}
	return b
}

// messageForm is a message's text (the notification and fallback) and Block Kit blocks.
func messageForm(m channels.Message) url.Values {
	var text string
	var blocks []obj
	if m.Approval == nil {
		text = channels.Clip(m.Text, textLimit)
		if text == "" {
			text = "…"
		}
		blocks = []obj{{"type": "section", "text": textObj("mrkdwn", text)}}
	} else {
		a := m.Approval
		text = channels.Clip(a.Summary(), textLimit)
		blocks = []obj{{"type": "section", "text": textObj("plain_text", text)}}
		if a.Status == "pending" {
			blocks = append(blocks, obj{"type": "actions", "block_id": "approval", "elements": []obj{
				button("approve", a.ID, "Approve", "primary"), button("deny", a.ID, "Deny", "danger"),
				button("deny_comment", a.ID, "Deny with comment", "")}})
		}
	}
	b, _ := json.Marshal(blocks)
	return url.Values{"text": {text}, "blocks": {string(b)}}
}

// Post sends m (chat.postMessage), in thread when not "".
func (c *Client) Post(ctx context.Context, conversation, thread string, m channels.Message) (string, error) {
	f := messageForm(m)
	f.Set("channel", conversation)
	if thread != "" {
		f.Set("thread_ts", thread)
	}
	r, err := c.call(ctx, "chat.postMessage", f, nil)
	if err != nil {
		return "", err
	}
	return r.TS, nil
}

// Update replaces a message the bot sent (chat.update).
func (c *Client) Update(ctx context.Context, conversation, ref string, m channels.Message) error {
	f := messageForm(m)
	f.Set("channel", conversation)
	f.Set("ts", ref)
	_, err := c.call(ctx, "chat.update", f, nil)
	return err
}

// Notice tells one person something only they see (chat.postEphemeral).
func (c *Client) Notice(ctx context.Context, conversation, thread, user, text string) error {
	f := url.Values{"channel": {conversation}, "user": {user}, "text": {text}}
	if thread != "" {
		f.Set("thread_ts", thread)
	}
	_, err := c.call(ctx, "chat.postEphemeral", f, nil)
	return err
}

// OpenComment opens the deny-with-comment modal (views.open) for the
// button press in: its trigger, approval, conversation and card.
func (c *Client) OpenComment(ctx context.Context, in channels.Inbound) error {
	triggerID, approvalID, conversation, cardTS := in.TriggerID, in.ApprovalID, in.Conversation, in.MessageRef
	view := obj{"type": "modal", "callback_id": commentCallback,
		"private_metadata": approvalID + "|" + conversation + "|" + cardTS,
		"title":            textObj("plain_text", "Deny with comment"),
		"submit":           textObj("plain_text", "Deny"),
		"close":            textObj("plain_text", "Cancel"),
		"blocks": []obj{{"type": "input", "block_id": "comment", "label": textObj("plain_text", "Comment"),
			"element": obj{"type": "plain_text_input", "action_id": "comment", "multiline": true,
				"placeholder": textObj("plain_text", "Why is this denied?")}}}}
	_, err := c.call(ctx, "views.open", nil, obj{"trigger_id": triggerID, "view": view})
	return err
}

// Check runs auth.test and returns the bot's user id.
func (c *Client) Check(ctx context.Context) (string, error) {
	r, err := c.call(ctx, "auth.test", url.Values{}, nil)
	if err != nil {
		return "", err
	}
	return r.UserID, nil
}
