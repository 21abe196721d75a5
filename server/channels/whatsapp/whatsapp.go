// Package whatsapp is the WhatsApp Cloud API side of chat channels over
// plain HTTP (there is no well-kept Go SDK): the GET verification
// handshake, X-Hub-Signature-256, notification parsing (text messages and
// interactive button replies) and the messages the bot sends.
package whatsapp

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/opsagent/opsagent/server/channels"
)

// Errors of verification and parsing.
var (
	ErrBadSignature = errors.New("whatsapp: bad X-Hub-Signature-256")
	ErrBadToken     = errors.New("whatsapp: wrong verify token")
	ErrMalformed    = errors.New("whatsapp: malformed notification")
)

// VerifyHandshake answers Meta's GET verification: the challenge when the
// mode is subscribe and the token is the channel's.
func VerifyHandshake(mode, token, challenge, want string) (string, error) {
	if mode != "subscribe" || want == "" || subtle.ConstantTimeCompare([]byte(token), []byte(want)) != 1 {
		return "", ErrBadToken
	}
	return challenge, nil
}

// Verify checks X-Hub-Signature-256: sha256= HMAC of the body with the app
// secret, compared in constant time.
func Verify(h http.Header, body []byte, appSecret string) error {
	sig, ok := strings.CutPrefix(h.Get("X-Hub-Signature-256"), "sha256=")
	got, err := hex.DecodeString(sig)
	if !ok || err != nil || appSecret == "" {
		return ErrBadSignature
	}
	mac := hmac.New(sha256.New, []byte(appSecret))
	mac.Write(body)
	if !hmac.Equal(got, mac.Sum(nil)) {
		return ErrBadSignature
	}
	return nil
}

type notification struct {
	Object string `json:"object"`
	Entry  []struct {
		Changes []struct {
			Field string `json:"field"`
			Value struct {
				Metadata struct {
					PhoneNumberID string `json:"phone_number_id"`
				} `json:"metadata"`
				Contacts []struct {
					Profile struct {
						Name string `json:"name"`
					} `json:"profile"`
					WaID string `json:"wa_id"`
				} `json:"contacts"`
				Messages []struct {
					From string `json:"from"`
					ID   string `json:"id"`
					Type string `json:"type"`
					Text struct {
						Body string `json:"body"`
					} `json:"text"`
					Interactive struct {
						Type        string `json:"type"`
						ButtonReply struct {
							ID    string `json:"id"`
							Title string `json:"title"`
						} `json:"button_reply"`
					} `json:"interactive"`
					Context struct {
						ID string `json:"id"`
					} `json:"context"`
				} `json:"messages"`
			} `json:"value"`
		} `json:"changes"`
	} `json:"entry"`
}

// Parse reads a notification: one Inbound per message (statuses and other
// fields are ignored). Messages to another phone number than the
// channel's are ignored too (one app may serve several numbers).
func Parse(body []byte, phoneNumberID string) ([]channels.Inbound, error) {
	var n notification
	if err := json.Unmarshal(body, &n); err != nil || n.Object != "whatsapp_business_account" {
		return nil, ErrMalformed
	}
	var out []channels.Inbound
	for _, e := range n.Entry {
		for _, ch := range e.Changes {
			v := ch.Value
			if ch.Field != "messages" || (phoneNumberID != "" && v.Metadata.PhoneNumberID != phoneNumberID) {
				continue
			}
			names := map[string]string{}
			for _, c := range v.Contacts {
				names[c.WaID] = c.Profile.Name
			}
			for _, m := range v.Messages {
				if m.ID == "" || m.From == "" {
					continue
				}
				in := channels.Inbound{Kind: channels.KindIgnore, DeliveryKey: "message:" + m.ID, Conversation: m.From,
					User: m.From, UserName: names[m.From], Private: true}
				switch m.Type {
				case "text":
					in.Kind, in.Text = channels.KindMessage, m.Text.Body
				case "interactive":
					if d, id, ok := channels.ParseButtonData(m.Interactive.ButtonReply.ID); ok && m.Interactive.Type == "button_reply" {
						in.Kind, in.Decision, in.ApprovalID, in.MessageRef = channels.KindDecision, d, id, m.Context.ID
					}
				}
				out = append(out, in)
			}
		}
	}
	return out, nil
}
