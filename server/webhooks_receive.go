package server

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/opsagent/opsagent/server/webhook/pipeline"
)

// The receiver's HTTP side: the engine (verification, group commit,
// dispatch) is server/webhook/pipeline.

// WebhookAck answers an accepted delivery (202).
type WebhookAck struct {
	EventID   string `json:"event_id" doc:"the stored event (for a duplicate: the event it duplicates)"`
	Status    string `json:"status" doc:"accepted, or duplicate when the delivery was stored before"`
	Duplicate string `json:"duplicate,omitempty" doc:"idempotency_key (the same provider delivery identity, e.g. X-GitHub-Delivery or a Stripe evt_ id, or X-Idempotency-Key, seen while the first event is kept) or dedupe (the same body within dedupe_window_seconds) when this delivery was not stored again"`
}

// handleWebhookReceive is POST /api/webhooks/{task_id}: verify, redact,
// normalize, store durably (group commit), acknowledge, dispatch later.
func (s *Server) handleWebhookReceive(c *Ctx) error {
	taskID, err := c.IDParam("task_id")
	if err != nil {
		return err
	}
	st, err := s.wh.Lookup(c.Context(), taskID)
	if err != nil {
		return err
	}
	body, err := readBody(c.R, c.Route.MaxBody)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return badRequest("body_unreadable", "could not read the request body")
	}
	ack, err := s.ingest(c.Context(), st, c.R.Header, body, pipeline.Opts{})
	if err != nil {
		return err
	}
	if ack.Status == "accepted" && changeCandidate(st.Webhook.Provider, body) {
		s.recordWebhookChange(c.Context(), st.Webhook.OrgID, st.Webhook.ProjectID, st.Webhook.Provider, c.R.Header, body)
	}
	if b := ack.appendJSON(make([]byte, 0, 128)); b != nil {
		writeJSONBytes202(c.W, b)
		return nil
	}
	return c.JSON(http.StatusAccepted, ack)
}

// appendJSON writes the ack as writeJSON's encoder does (a newline after
// it), without reflection; nil when a value is not a plain string (the
// ids are uuids, status and duplicate fixed words: never in practice).
func (a *WebhookAck) appendJSON(b []byte) []byte {
	for _, s := range [...]string{a.EventID, a.Status, a.Duplicate} {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
				return nil
			}
		}
	}
	b = append(b, `{"event_id":"`...)
	b = append(b, a.EventID...)
	b = append(b, `","status":"`...)
	b = append(b, a.Status...)
	if a.Duplicate != "" {
		b = append(b, `","duplicate":"`...)
		b = append(b, a.Duplicate...)
	}
	return append(b, "\"}\n"...)
}

// jsonContentType is the Content-Type header's value, shared by every
// acknowledgement: net/http copies the header map (values included) when
// the status is written, and nothing edits a header value in place.
var jsonContentType = []string{"application/json"}

// writeJSONBytes202 answers 202 with a JSON body already written.
func writeJSONBytes202(w http.ResponseWriter, b []byte) {
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(http.StatusAccepted)
	_, _ = w.Write(b)
}

// readBody reads the request body into one buffer of Content-Length bytes
// when the sender gave it, not a buffer grown and copied from 512 bytes.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength <= 0 || r.ContentLength > limit {
		return io.ReadAll(r.Body)
	}
	// net/http ends the body at Content-Length and reports a shorter one
	// as io.ErrUnexpectedEOF.
	buf := make([]byte, r.ContentLength)
	if _, err := io.ReadFull(r.Body, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// ingest runs a delivery (live, test or replay) through the pipeline and
// maps its refusals to the API's error shapes.
func (s *Server) ingest(ctx context.Context, st *pipeline.Hook, h http.Header, body []byte, o pipeline.Opts) (*WebhookAck, error) {
	ack, err := s.wh.Ingest(ctx, st, h, body, o)
	if err != nil {
		return nil, ingestError(err)
	}
	if ack.Duplicate != "" {
		return &WebhookAck{EventID: ack.EventID, Status: "duplicate", Duplicate: ack.Duplicate}, nil
	}
	return &WebhookAck{EventID: ack.EventID, Status: "accepted"}, nil
}

// ingestError maps the pipeline's refusals to the API's error shapes.
func ingestError(err error) error {
	var rl *pipeline.RateLimited
	var inv *pipeline.Invalid
	switch {
	case errors.As(err, &rl):
		return &RateLimitError{RetryAfter: rl.RetryAfter}
	case errors.As(err, &inv):
		return invalid(inv.Msg, inv.Type, inv.Loc...)
	}
	return err
}
