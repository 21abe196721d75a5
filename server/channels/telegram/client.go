package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/opsagent/opsagent/server/channels"
)

// DefaultAPIURL is the Bot API.
const DefaultAPIURL = "https://api.telegram.org"

// Client calls the Bot API for one bot.
type Client struct {
	base string // .../bot<TOKEN>
	hc   *http.Client
}

// New returns a client for token against apiURL (DefaultAPIURL when "").
func New(token, apiURL string, hc *http.Client) *Client {
	if apiURL == "" {
		apiURL = DefaultAPIURL
	}
	return &Client{base: strings.TrimRight(apiURL, "/") + "/bot" + token, hc: hc}
}

// textLimit is a message's 4096 characters, with room for the cut mark.
const textLimit = 4000

type apiResult struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  struct {
		RetryAfter int `json:"retry_after"`
	} `json:"parameters"`
}

// call posts a Bot API method with a JSON body, retrying per channels.Do.
func (c *Client) call(ctx context.Context, method string, body any, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	return channels.Do(ctx, func() error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/"+method, bytes.NewReader(b))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		res, err := c.hc.Do(req)
		if err != nil {
			return &channels.Temporary{Err: fmt.Errorf("telegram %s: %w", method, redact(err))}
		}
		defer res.Body.Close()
		var r apiResult
		_ = json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&r)
		switch {
		case res.StatusCode == http.StatusTooManyRequests:
			wait := channels.RetryAfter(res.Header.Get("Retry-After"), time.Duration(r.Parameters.RetryAfter)*time.Second)
			return &channels.RateLimited{RetryAfter: wait}
		case res.StatusCode >= 500:
			return &channels.Temporary{Err: fmt.Errorf("telegram %s: %s", method, res.Status)}
		case !r.OK:
			return fmt.Errorf("telegram %s: %d %s", method, r.ErrorCode, r.Description)
		}
		if out != nil {
			return json.Unmarshal(r.Result, out)
		}
		return nil
	})
}

// redact keeps the bot token (part of every URL) out of errors and logs.
func redact(err error) error {
	return fmt.Errorf("%s", strings.ReplaceAll(err.Error(), "/bot", "/bot<redacted>/"))
}

type button struct {
	Text         string `json:"text"`
	CallbackData string `json:"callback_data"`
}

func payload(m channels.Message) map[string]any {
	if m.Approval == nil {
		text := m.Text
		if text == "" {
			text = "…"
		}
		return map[string]any{"text": channels.Clip(text, textLimit), "reply_markup": map[string]any{"inline_keyboard": [][]button{}}}
	}
	p := map[string]any{"text": channels.Clip(m.Approval.Summary(), textLimit)}
	kb := [][]button{}
	if m.Approval.Status == "pending" {
		kb = append(kb, []button{{Text: "Approve", CallbackData: channels.ButtonData(channels.Approve, m.Approval.ID)},
			{Text: "Deny", CallbackData: channels.ButtonData(channels.Deny, m.Approval.ID)}},
			[]button{{Text: "Deny with comment", CallbackData: channels.ButtonData(channels.Comment, m.Approval.ID)}})
	}
	p["reply_markup"] = map[string]any{"inline_keyboard": kb}
	return p
}

// Post sends m (sendMessage), in a forum topic when thread is not "".
func (c *Client) Post(ctx context.Context, conversation, thread string, m channels.Message) (string, error) {
	p := payload(m)
	p["chat_id"] = conversation
	if thread != "" {
		p["message_thread_id"], _ = strconv.ParseInt(thread, 10, 64)
	}
	var msg struct {
		MessageID int64 `json:"message_id"`
	}
	if err := c.call(ctx, "sendMessage", p, &msg); err != nil {
		return "", err
	}
	return strconv.FormatInt(msg.MessageID, 10), nil
}

// Update edits a message the bot sent (editMessageText).
func (c *Client) Update(ctx context.Context, conversation, ref string, m channels.Message) error {
	p := payload(m)
	p["chat_id"] = conversation
	p["message_id"], _ = strconv.ParseInt(ref, 10, 64)
	return c.call(ctx, "editMessageText", p, nil)
}

// AnswerCallback acknowledges a pressed inline button (answerCallbackQuery).
func (c *Client) AnswerCallback(ctx context.Context, id, text string) error {
	return c.call(ctx, "answerCallbackQuery", map[string]any{"callback_query_id": id, "text": text}, nil)
}

// Check runs getMe and returns the bot's username.
func (c *Client) Check(ctx context.Context) (string, error) {
	var me user
	if err := c.call(ctx, "getMe", map[string]any{}, &me); err != nil {
		return "", err
	}
	return me.Username, nil
}

// OpenComment asks for a denial's comment: a message that forces a reply
// (the reply, parsed by Parse, denies with its text as the comment).
func (c *Client) OpenComment(ctx context.Context, in channels.Inbound) error {
	p := map[string]any{"chat_id": in.Conversation, "text": channels.CommentPrompt(in.ApprovalID),
		"reply_markup": map[string]any{"force_reply": true, "selective": true}}
	if in.Thread != "" { // the card's forum topic
		p["message_thread_id"], _ = strconv.ParseInt(in.Thread, 10, 64)
	}
	return c.call(ctx, "sendMessage", p, nil)
}
