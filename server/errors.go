package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/opsagent/opsagent/rag"
	"github.com/opsagent/opsagent/server/agent/runner"
	"github.com/opsagent/opsagent/store"
)

// FieldError is one entry of FastAPI's HTTPValidationError.
type FieldError struct {
	Loc  []any  `json:"loc"`
	Msg  string `json:"msg"`
	Type string `json:"type"`
}

// ValidationError is a 422 with one or more field errors.
type ValidationError struct{ Errors []FieldError }

func (e *ValidationError) Error() string {
	if len(e.Errors) == 0 {
		return "validation error"
	}
	return "validation error: " + e.Errors[0].Msg
}

// invalid builds a single-field 422.
func invalid(msg, typ string, loc ...any) *ValidationError {
	return &ValidationError{Errors: []FieldError{{Loc: loc, Msg: msg, Type: typ}}}
}

// RateLimitError is a 429 that tells the client when to come back.
type RateLimitError struct{ RetryAfter time.Duration }

func (e *RateLimitError) Error() string { return "rate limited" }

var errNotFoundRoute = store.Errorf(store.ENotFound, "Not Found")

// statusOf is the one table from error code to HTTP status.
var statusOf = map[string]int{
	store.EInvalid:      http.StatusBadRequest,
	store.EUnauthorized: http.StatusUnauthorized,
	store.EForbidden:    http.StatusForbidden,
	store.ENotFound:     http.StatusNotFound,
	store.EConflict:     http.StatusConflict,
	store.ERateLimited:  http.StatusTooManyRequests,
	store.ETooLarge:     http.StatusRequestEntityTooLarge,
	store.EInternal:     http.StatusInternalServerError,
}

// writeError writes err in the shapes of the conventions; unknown errors are a
// 500 whose details go to the log under the request id, never to the client.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	var ve *ValidationError
	if errors.As(err, &ve) {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": ve.Errors})
		return
	}
	var rl *RateLimitError
	if errors.As(err, &rl) {
		secs := int(rl.RetryAfter.Round(time.Second) / time.Second)
		if secs < 1 {
			secs = 1
		}
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		writeJSON(w, http.StatusTooManyRequests, map[string]any{"detail": "Too many requests; retry later", "code": "rate_limited"})
		return
	}
	if writeBillingError(w, err) {
		return
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		writeJSON(w, http.StatusRequestEntityTooLarge, map[string]any{"detail": "Request body too large (limit " + strconv.FormatInt(mbe.Limit, 10) + " bytes)", "code": "body_too_large"})
		return
	}
	if errors.Is(err, rag.ErrLoading) {
		// After a restart the server listens before the knowledge index has
		// loaded (rag.OpenInBackground); what needs it says so, briefly.
		w.Header().Set("Retry-After", "2")
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{
			"detail": "The knowledge index is still loading after a restart; retry in a few seconds", "code": "index_loading"})
		return
	}
	if errors.Is(err, runner.ErrDraining) {
		w.Header().Set("Retry-After", "5")
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"detail": runner.ErrDraining.Message, "code": runner.ErrDraining.Reason})
		return
	}
	var se *store.Error
	if errors.As(err, &se) && se.Code != store.EInternal {
		status := statusOf[se.Code]
		body := map[string]any{"detail": se.Message}
		if se.Reason != "" {
			body["code"] = se.Reason
		}
		if status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", "Bearer")
		}
		writeJSON(w, status, body)
		return
	}
	if store.Contended(err) {
		// A write conflict that outlasted the store's retries: not a fault, a
		// moment of contention; the client's retry goes through.
		loggerFrom(r.Context()).WarnContext(r.Context(), "write conflict after retries", "request_id", RequestID(r.Context()), "err", err)
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"detail": "The database was busy with conflicting writes; retry in a moment", "code": "write_conflict"})
		return
	}
	rid := RequestID(r.Context())
	loggerFrom(r.Context()).ErrorContext(r.Context(), "internal error", "request_id", rid, "method", r.Method, "path", r.URL.Path, "err", err)
	writeJSON(w, http.StatusInternalServerError, map[string]any{"detail": "Internal server error (request " + rid + ")", "code": "internal"})
}

// Convenience constructors for handlers.
func unauthorized(msg string) error { return store.Errorf(store.EUnauthorized, "%s", msg) }
func forbidden(msg string) error    { return store.Errorf(store.EForbidden, "%s", msg) }
func badRequest(reason, msg string) error {
	return &store.Error{Code: store.EInvalid, Message: msg, Reason: reason}
}

// mustJSON marshals v or panics: used only on values built by the server itself.
func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
