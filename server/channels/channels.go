// Package channels holds what the chat platforms (Slack, Telegram,
// WhatsApp) share: the normalized inbound event, the outbound message with
// its approval card, and the retry rule of outbound calls. Each platform's
// wire format (verification, parsing, Web API) lives in its sub-package;
// the server joins them to sessions, approvals and accounts. Nothing here
// imports package server or the store.
package channels

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Kinds of inbound events.
const (
	KindMessage   = "message"   // a person wrote to the bot
	KindDecision  = "decision"  // a person pressed Approve or Deny (or sent a comment)
	KindCommentUI = "comment"   // a person asked to deny with a comment (Slack: open the modal)
	KindChallenge = "challenge" // a platform handshake to answer with Challenge
	KindIgnore    = "ignore"    // something the bot does not act on (its own messages, edits, statuses)
)

// Decisions a button carries.
const (
	Approve = "approve"
	Deny    = "deny"
)

// Inbound is one thing a platform told the bot, in the platform's terms.
type Inbound struct {
	Kind         string
	DeliveryKey  string // event_id, update_id, message id: a retry carries the same
	Conversation string // Slack channel, Telegram chat id, WhatsApp number
	Thread       string // Slack thread ts, Telegram topic id, "" for WhatsApp
	User         string // the platform's user id
	UserName     string
	Text         string
	Private      bool // a direct message (not a group or channel)
	ApprovalID   string
	Decision     string
	Comment      string
	TriggerID    string // Slack: opens the comment modal
	CallbackID   string // Telegram: the callback query to answer
	MessageRef   string // the message that carried the button
	Challenge    string
}

// ThreadKey is the identity of the session thread an inbound belongs to.
func (in Inbound) ThreadKey() string {
	if in.Thread == "" {
		return in.Conversation
	}
	return in.Conversation + ":" + in.Thread
}

// Message is what the bot posts: text, and optionally an approval card.
type Message struct {
	Text     string
	Approval *Approval
}

// Approval is the card of a pending (buttons) or decided (no buttons) approval.
type Approval struct {
	ID        string
	Title     string
	Reason    string
	Command   string
	Status    string // pending, approved, denied, expired
	DecidedBy string
	Comment   string
}

// Summary is the card's text, the same on every platform.
func (a *Approval) Summary() string {
	var b strings.Builder
	switch a.Status {
	case "approved":
		b.WriteString("✅ Approved")
	case "denied":
		b.WriteString("❌ Denied")
	case "expired":
		b.WriteString("⌛ Expired")
	default:
		b.WriteString("⚠️ Approval needed")
	}
	if a.DecidedBy != "" {
		b.WriteString(" by " + a.DecidedBy)
	}
	b.WriteString(": " + a.Title)
	if a.Command != "" {
		b.WriteString("\n" + a.Command)
	}
	if a.Reason != "" && a.Status == "pending" {
		b.WriteString("\nWhy: " + a.Reason)
	}
	if a.Comment != "" {
		b.WriteString("\nComment: " + a.Comment)
	}
	return b.String()
}

// Comment is the button that asks for a comment before denying.
const Comment = "comment"

// ButtonData is the payload of an approval button: "a:<id>", "d:<id>" or
// "c:<id>" (deny with a comment).
func ButtonData(decision, approvalID string) string {
	switch decision {
	case Approve:
		return "a:" + approvalID
	case Comment:
		return "c:" + approvalID
	}
	return "d:" + approvalID
}

// ParseButtonData reads ButtonData back.
func ParseButtonData(s string) (decision, approvalID string, ok bool) {
	switch {
	case strings.HasPrefix(s, "a:"):
		return Approve, s[2:], true
	case strings.HasPrefix(s, "d:"):
		return Deny, s[2:], true
	case strings.HasPrefix(s, "c:"):
		return Comment, s[2:], true
	}
	return "", "", false
}

// CommentPrompt is the text of the message that asks for a denial's
// comment where the platform has no dialog (Telegram: a reply to it is the
// comment). It names the approval, which the reply then carries back.
func CommentPrompt(approvalID string) string {
	return "Reply to this message with why you deny it. [approval " + approvalID + "]"
}

// ApprovalOfPrompt reads the approval id back from a CommentPrompt.
func ApprovalOfPrompt(text string) (string, bool) {
	i := strings.LastIndex(text, "[approval ")
	if i < 0 || !strings.HasSuffix(text, "]") {
		return "", false
	}
	return text[i+len("[approval ") : len(text)-1], true
}

// ErrCannotEdit: the platform cannot change a sent message (WhatsApp).
var ErrCannotEdit = errors.New("channels: this platform cannot edit a sent message")

// Client is a platform's outbound side.
type Client interface {
	// Post sends m to a conversation (in thread, when not "") and returns
	// the message's reference for Update.
	Post(ctx context.Context, conversation, thread string, m Message) (ref string, err error)
	// Update replaces a message the bot sent (ErrCannotEdit where impossible).
	Update(ctx context.Context, conversation, ref string, m Message) error
	// Check proves the credentials work and returns the bot's identity.
	Check(ctx context.Context) (string, error)
}

// RateLimited is an outbound call the platform refused with 429.
type RateLimited struct{ RetryAfter time.Duration }

func (e *RateLimited) Error() string { return "rate limited; retry after " + e.RetryAfter.String() }

// Temporary marks a failure worth retrying (5xx, connection errors).
type Temporary struct{ Err error }

func (e *Temporary) Error() string { return e.Err.Error() }
func (e *Temporary) Unwrap() error { return e.Err }

// Retry limits: an outbound call is tried at most MaxAttempts times; a
// Retry-After longer than MaxRetryAfter is not waited for (the update is
// dropped rather than hold the relay for minutes).
var (
	MaxAttempts   = 4
	BaseBackoff   = 250 * time.Millisecond
	MaxRetryAfter = 30 * time.Second
)

// Do runs call, retrying 429s after their Retry-After and temporary
// failures with jittered exponential back-off.
func Do(ctx context.Context, call func() error) error {
	var err error
	for attempt := 0; attempt < MaxAttempts; attempt++ {
		err = call()
		if err == nil {
			return nil
		}
		var wait time.Duration
		var rl *RateLimited
		var tmp *Temporary
		switch {
		case errors.As(err, &rl):
			wait = max(rl.RetryAfter, BaseBackoff)
			if wait > MaxRetryAfter {
				return err
			}
		case errors.As(err, &tmp):
			wait = BaseBackoff << attempt
			wait += time.Duration(rand.Int64N(int64(wait)/2 + 1))
		default:
			return err
		}
		if attempt == MaxAttempts-1 {
			break
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	return err
}

// Clip cuts s to at most n bytes on a rune boundary, marking the cut.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n-len("…")], "") + "…"
}

// RetryAfter reads a Retry-After header in seconds (def when absent or bad).
func RetryAfter(h string, def time.Duration) time.Duration {
	if n, err := strconv.Atoi(strings.TrimSpace(h)); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	return def
}
