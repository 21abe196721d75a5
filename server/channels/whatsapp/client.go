package whatsapp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/opsagent/opsagent/server/channels"
)

// DefaultAPIURL is the Graph API with the version the bot speaks.
const DefaultAPIURL = "https://graph.facebook.com/v21.0"

// Client sends messages from one business phone number.
type Client struct {
	url   string // .../PHONE_NUMBER_ID/messages
	base  string
	phone string
	token string
	hc    *http.Client
}

// New returns a client for phoneNumberID with an access token.
func New(token, phoneNumberID, apiURL string, hc *http.Client) *Client {
	if apiURL == "" {
		apiURL = DefaultAPIURL
	}
	base := strings.TrimRight(apiURL, "/")
	return &Client{url: base + "/" + phoneNumberID + "/messages", base: base, phone: phoneNumberID, token: token, hc: hc}
}

// textLimit is a text message's 4096 characters; an interactive body has 1024.
const (
	textLimit        = 4000
	interactiveLimit = 1000
)

func (c *Client) do(ctx context.Context, method, url string, body any, out any) error {
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			return err
		}
	}
	return channels.Do(ctx, func() error {
		req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(b))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+c.token)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := c.hc.Do(req)
		if err != nil {
			return &channels.Temporary{Err: err}
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		switch {
		case res.StatusCode == http.StatusTooManyRequests:
			return &channels.RateLimited{RetryAfter: channels.RetryAfter(res.Header.Get("Retry-After"), channels.BaseBackoff)}
		case res.StatusCode >= 500:
			return &channels.Temporary{Err: fmt.Errorf("whatsapp: %s", res.Status)}
		case res.StatusCode >= 300:
			var e struct {
				Error struct {
					Message string `json:"message"`
					Code    int    `json:"code"`
				} `json:"error"`
			}
			_ = json.Unmarshal(raw, &e)
			return fmt.Errorf("whatsapp: %s: %d %s", res.Status, e.Error.Code, e.Error.Message)
		}
		if out != nil {
			return json.Unmarshal(raw, out)
		}
		return nil
	})
}

func message(to string, m channels.Message) map[string]any {
	p := map[string]any{"messaging_product": "whatsapp", "recipient_type": "individual", "to": to}
	if m.Approval == nil || m.Approval.Status != "pending" {
		text := m.Text
		if m.Approval != nil {
			text = m.Approval.Summary()
		}
		p["type"], p["text"] = "text", map[string]any{"body": channels.Clip(text, textLimit), "preview_url": false}
		return p
	}
	a := m.Approval
	btn := func(decision, title string) map[string]any {
		return map[string]any{"type": "reply", "reply": map[string]any{"id": channels.ButtonData(decision, a.ID), "title": title}}
	}
	p["type"] = "interactive"
	p["interactive"] = map[string]any{"type": "button", "body": map[string]any{"text": channels.Clip(a.Summary(), interactiveLimit)},
		"action": map[string]any{"buttons": []any{btn(channels.Approve, "Approve"), btn(channels.Deny, "Deny")}}}
	return p
}

// Post sends m to a WhatsApp number (thread is ignored: a number is one conversation).
func (c *Client) Post(ctx context.Context, conversation, _ string, m channels.Message) (string, error) {
	var out struct {
		Messages []struct {
			ID string `json:"id"`
		} `json:"messages"`
	}
	if err := c.do(ctx, http.MethodPost, c.url, message(conversation, m), &out); err != nil {
		return "", err
	}
	if len(out.Messages) == 0 {
		return "", fmt.Errorf("whatsapp: the answer names no message")
	}
	return out.Messages[0].ID, nil
}

// Update: WhatsApp cannot edit a sent message.
func (c *Client) Update(context.Context, string, string, channels.Message) error {
	return channels.ErrCannotEdit
}

// Check reads the phone number's record (its display number).
func (c *Client) Check(ctx context.Context) (string, error) {
	var out struct {
		DisplayPhoneNumber string `json:"display_phone_number"`
	}
	if err := c.do(ctx, http.MethodGet, c.base+"/"+c.phone, nil, &out); err != nil {
		return "", err
	}
	return out.DisplayPhoneNumber, nil
}
