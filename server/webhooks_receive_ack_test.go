package server

import (
	"net/http/httptest"
	"testing"
)

// The receiver's 202 is written by hand: the same bytes as writeJSON's.
func TestWebhookAckJSONSameAsEncoder(t *testing.T) {
	for _, a := range []WebhookAck{
		{EventID: "0193a4f2-7c3e-7b1a-9d2e-4f5a6b7c8d9e", Status: "accepted"},
		{EventID: "0193a4f2-7c3e-7b1a-9d2e-4f5a6b7c8d9e", Status: "duplicate", Duplicate: "idempotency_key"},
		{EventID: "x<y>&z", Status: "duplicate", Duplicate: "dedupe"},
	} {
		want := httptest.NewRecorder()
		writeJSON(want, 202, &a)
		got := httptest.NewRecorder()
		writeJSONBytes202(got, a.appendJSON(nil))
		if got.Body.String() != want.Body.String() || got.Code != want.Code ||
			got.Header().Get("Content-Type") != want.Header().Get("Content-Type") {
			t.Fatalf("got %d %q %v, want %d %q %v", got.Code, got.Body, got.Header(), want.Code, want.Body, want.Header())
		}
	}
	if (&WebhookAck{EventID: `a"b`, Status: "accepted"}).appendJSON(nil) != nil {
		t.Fatal("a value to escape must take writeJSON's path")
	}
}
