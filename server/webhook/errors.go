package webhook

import (
	"errors"
	"net/http"
)

// Code classifies an *Error so the HTTP layer can pick a status and a
// stable machine-readable "code" without parsing messages.
type Code string

const (
	// CodeMissing: the credential header the scheme needs is absent or empty.
	CodeMissing Code = "signature_missing"
	// CodeMalformed: the header is present but cannot be parsed
	// (no "sha256=" prefix, bad hex, no t= in a Stripe header, ...).
	CodeMalformed Code = "signature_malformed"
	// CodeMismatch: no configured secret produces the presented credential.
	CodeMismatch Code = "signature_mismatch"
	// CodeStale: the signature is valid but its timestamp lies outside the
	// replay window (too old or too far in the future).
	CodeStale Code = "signature_stale"
	// CodeNoSecret: the webhook is configured with a scheme that needs a
	// secret but none was given; a server-side misconfiguration that must
	// still fail closed.
	CodeNoSecret Code = "secret_missing"
	// CodeUnsupported: an unknown scheme or provider name.
	CodeUnsupported Code = "unsupported"
	// CodeInvalidPayload: the body is not JSON of the shape the provider sends.
	CodeInvalidPayload Code = "invalid_payload"
	// CodeInvalidGlob: a redaction glob failed validation.
	CodeInvalidGlob Code = "invalid_glob"
	// CodeInvalidCondition: a routing condition failed to compile or is too costly.
	CodeInvalidCondition Code = "invalid_condition"
	// CodeConditionEval: a valid condition failed at evaluation time (type
	// error on an unexpected payload, budget or timeout exceeded).
	CodeConditionEval Code = "condition_eval"
)

// Error is the one error type this package returns across its boundary.
// Message is safe to show to the caller: it never contains secret values
// or computed signatures.
type Error struct {
	Code    Code
	Message string
	err     error // optional cause, kept for errors.Is/As and logs
}

func (e *Error) Error() string {
	if e.Message == "" {
		return string(e.Code)
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.err }

// Is makes errors.Is(err, webhook.ErrMismatch) and friends match on Code
// alone, whatever the message.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.err == nil && t.Code == e.Code
}

// HTTPStatus is the status the receiver answers with: 401 for every
// verification failure (so probes learn nothing about which check failed
// beyond the code), 422 for bodies and configuration that do not validate,
// 500 for evaluation failures, which are the server's problem.
func (e *Error) HTTPStatus() int {
	switch e.Code {
	case CodeMissing, CodeMalformed, CodeMismatch, CodeStale, CodeNoSecret:
		return http.StatusUnauthorized
	case CodeUnsupported, CodeInvalidPayload, CodeInvalidGlob, CodeInvalidCondition:
		return http.StatusUnprocessableEntity
	default:
		return http.StatusInternalServerError
	}
}

// Sentinels for errors.Is; they carry only a Code.
var (
	ErrMissing          = &Error{Code: CodeMissing}
	ErrMalformed        = &Error{Code: CodeMalformed}
	ErrMismatch         = &Error{Code: CodeMismatch}
	ErrStale            = &Error{Code: CodeStale}
	ErrNoSecret         = &Error{Code: CodeNoSecret}
	ErrUnsupported      = &Error{Code: CodeUnsupported}
	ErrInvalidPayload   = &Error{Code: CodeInvalidPayload}
	ErrInvalidGlob      = &Error{Code: CodeInvalidGlob}
	ErrInvalidCondition = &Error{Code: CodeInvalidCondition}
	ErrConditionEval    = &Error{Code: CodeConditionEval}
)

func newError(code Code, msg string) *Error { return &Error{Code: code, Message: msg} }

func wrapError(code Code, msg string, cause error) *Error {
	return &Error{Code: code, Message: msg, err: cause}
}

// ErrorCode returns the Code of err if it is (or wraps) an *Error, else "".
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
