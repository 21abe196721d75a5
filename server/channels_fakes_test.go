package server_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// newTelegramFake is a loopback Bot API: /bot<TOKEN>/<method> with JSON
// bodies, answering as Telegram does.
func newTelegramFake(t *testing.T, token string) *chatFake {
	f := &chatFake{t: t, limitOnce: map[string]bool{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m, ok := strings.CutPrefix(r.URL.Path, "/bot"+token+"/")
		if !ok {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"ok":false,"error_code":401,"description":"Unauthorized"}`))
			return
		}
		c, ok := f.record(m, r)
		w.Header().Set("Content-Type", "application/json")
		if !ok {
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 1","parameters":{"retry_after":1}}`))
			return
		}
		var result any = true
		switch m {
		case "sendMessage", "editMessageText":
			n, _ := strconv.Atoi(tgRef(c))
			if id, ok := c.JSON["message_id"].(float64); ok {
				n = int(id)
			}
			result = map[string]any{"message_id": n, "chat": map[string]any{"id": c.JSON["chat_id"]}, "text": c.JSON["text"]}
		case "getMe":
			result = map[string]any{"id": 123456, "is_bot": true, "first_name": "opsagent", "username": "opsagent_bot"}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": result})
	}))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// newWhatsAppFake is a loopback Cloud API: POST /<phone id>/messages.
func newWhatsAppFake(t *testing.T, token string) *chatFake {
	f := &chatFake{t: t, limitOnce: map[string]bool{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":{"message":"Invalid OAuth access token.","type":"OAuthException","code":190}}`))
			return
		}
		c, ok := f.record(r.Method+" "+r.URL.Path, r)
		w.Header().Set("Content-Type", "application/json")
		if !ok {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"messaging_product": "whatsapp",
			"contacts": []any{map[string]any{"input": c.JSON["to"], "wa_id": c.JSON["to"]}},
			"messages": []any{map[string]any{"id": "wamid." + c.Ref}}})
	}))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// telegramPost delivers an update with the webhook's secret token.
func telegramPost(env *testEnv, chID, secret string, body []byte) *resp {
	env.t.Helper()
	req, _ := http.NewRequest("POST", env.URL+"/api/inbound/telegram/"+chID, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if secret != "" {
		req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
	}
	return env.newClient().send(req)
}

// whatsappPost delivers a notification signed with the app secret.
func whatsappPost(env *testEnv, chID, appSecret string, body []byte) *resp {
	env.t.Helper()
	req, _ := http.NewRequest("POST", env.URL+"/api/inbound/whatsapp/"+chID, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	mac := hmac.New(sha256.New, []byte(appSecret))
	mac.Write(body)
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	return env.newClient().send(req)
}

// tgRef is the message id the Telegram fake gave a sent message.
func tgRef(c chatCall) string {
	n, _ := strconv.Atoi(strings.TrimPrefix(c.Ref, "1700000000."))
	return strconv.Itoa(n)
}
