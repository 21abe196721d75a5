package slack

import (
	"context"
	"errors"
	"net/http"

	"github.com/slack-go/slack"

	"github.com/opsagent/opsagent/server/channels"
)

// DefaultAPIURL is Slack's Web API.
const DefaultAPIURL = "https://slack.com/api/"

// Client is a bot's Web API client.
type Client struct{ api *slack.Client }

// New returns a client for botToken against apiURL (DefaultAPIURL when "").
func New(botToken, apiURL string, hc *http.Client) *Client {
	if apiURL == "" {
		apiURL = DefaultAPIURL
	}
	if apiURL[len(apiURL)-1] != '/' {
		apiURL += "/"
	}
	return &Client{api: slack.New(botToken, slack.OptionAPIURL(apiURL), slack.OptionHTTPClient(hc))}
}

// textLimit keeps a message inside a section block's 3000 characters.
const textLimit = 2900

func msgOptions(m channels.Message) []slack.MsgOption {
	if m.Approval == nil {
		text := channels.Clip(m.Text, textLimit)
		return []slack.MsgOption{slack.MsgOptionText(text, false),
			slack.MsgOptionBlocks(slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, orDots(text), false, false), nil, nil))}
	}
	a := m.Approval
	text := channels.Clip(a.Summary(), textLimit)
	blocks := []slack.Block{slack.NewSectionBlock(slack.NewTextBlockObject(slack.PlainTextType, text, false, false), nil, nil)}
	if a.Status == "pending" {
		approve := slack.NewButtonBlockElement("approve", a.ID, slack.NewTextBlockObject(slack.PlainTextType, "Approve", false, false))
		approve.Style = slack.StylePrimary
		deny := slack.NewButtonBlockElement("deny", a.ID, slack.NewTextBlockObject(slack.PlainTextType, "Deny", false, false))
		deny.Style = slack.StyleDanger
		comment := slack.NewButtonBlockElement("deny_comment", a.ID, slack.NewTextBlockObject(slack.PlainTextType, "Deny with comment", false, false))
		blocks = append(blocks, slack.NewActionBlock("approval", approve, deny, comment))
	}
	return []slack.MsgOption{slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...)}
}

func orDots(s string) string {
	if s == "" {
		return "…"
	}
	return s
}

// Post sends m (chat.postMessage), in thread when not "".
func (c *Client) Post(ctx context.Context, conversation, thread string, m channels.Message) (string, error) {
	opts := msgOptions(m)
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	var ts string
	err := channels.Do(ctx, func() error {
		var err error
		_, ts, err = c.api.PostMessageContext(ctx, conversation, opts...)
		return classify(err)
	})
	return ts, err
}

// Update replaces a message the bot sent (chat.update).
func (c *Client) Update(ctx context.Context, conversation, ref string, m channels.Message) error {
	return channels.Do(ctx, func() error {
		_, _, _, err := c.api.UpdateMessageContext(ctx, conversation, ref, msgOptions(m)...)
		return classify(err)
	})
}

// Notice tells one person something only they see (chat.postEphemeral).
func (c *Client) Notice(ctx context.Context, conversation, thread, user, text string) error {
	opts := []slack.MsgOption{slack.MsgOptionText(text, false)}
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	return channels.Do(ctx, func() error {
		_, err := c.api.PostEphemeralContext(ctx, conversation, user, opts...)
		return classify(err)
	})
}

// OpenComment opens the deny-with-comment modal (views.open).
func (c *Client) OpenComment(ctx context.Context, triggerID, approvalID, conversation, cardTS string) error {
	input := slack.NewPlainTextInputBlockElement(slack.NewTextBlockObject(slack.PlainTextType, "Why is this denied?", false, false), "comment")
	input.Multiline = true
	view := slack.ModalViewRequest{Type: slack.VTModal, CallbackID: commentCallback,
		PrivateMetadata: approvalID + "|" + conversation + "|" + cardTS,
		Title:           slack.NewTextBlockObject(slack.PlainTextType, "Deny with comment", false, false),
		Submit:          slack.NewTextBlockObject(slack.PlainTextType, "Deny", false, false),
		Close:           slack.NewTextBlockObject(slack.PlainTextType, "Cancel", false, false),
		Blocks: slack.Blocks{BlockSet: []slack.Block{
			slack.NewInputBlock("comment", slack.NewTextBlockObject(slack.PlainTextType, "Comment", false, false), nil, input)}}}
	return channels.Do(ctx, func() error {
		_, err := c.api.OpenViewContext(ctx, triggerID, view)
		return classify(err)
	})
}

// Check runs auth.test and returns the bot's user id.
func (c *Client) Check(ctx context.Context) (string, error) {
	var id string
	err := channels.Do(ctx, func() error {
		r, err := c.api.AuthTestContext(ctx)
		if err == nil {
			id = r.UserID
		}
		return classify(err)
	})
	return id, err
}

// classify maps slack-go's errors to the retry rule's.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		return &channels.RateLimited{RetryAfter: rl.RetryAfter}
	}
	var sc slack.StatusCodeError
	if errors.As(err, &sc) && (sc.Code >= 500 || sc.Code == http.StatusTooManyRequests) {
		return &channels.Temporary{Err: err}
	}
	return err
}
