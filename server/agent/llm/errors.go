package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ErrorClass sorts provider failures into what a caller can act on: retry,
// fix the configuration, or give up.
type ErrorClass string

// The error classes. Only RateLimit, Server, Timeout and Network are retried.
const (
	ClassConfig      ErrorClass = "config"       // no or invalid provider configuration
	ClassAuth        ErrorClass = "auth"         // 401/403: key missing, wrong or without access
	ClassBadRequest  ErrorClass = "bad_request"  // other 4xx: unknown model, request too large
	ClassRateLimit   ErrorClass = "rate_limited" // 429
	ClassServer      ErrorClass = "server"       // 5xx
	ClassTimeout     ErrorClass = "timeout"      // one attempt exceeded Config.Timeout
	ClassNetwork     ErrorClass = "network"      // connection refused, reset, cut stream
	ClassBadResponse ErrorClass = "bad_response" // 2xx with a body that is not the wire format
	ClassCanceled    ErrorClass = "canceled"     // the caller's context ended
	// ClassContextOverflow is a request the server refused as longer than
	// the model's context window (overflow.go reads each server's words).
	ClassContextOverflow ErrorClass = "context_overflow"
)

// Error is the one error type that leaves this package. Message never holds
// the API key; it may hold a short excerpt of the provider's reply.
type Error struct {
	Class      ErrorClass
	Provider   string        // "openai" or "anthropic"
	Status     int           // HTTP status, 0 when no response arrived
	RetryAfter time.Duration // from Retry-After / retry-after-ms, 0 when absent
	Attempts   int           // how many attempts were made
	// ContextLimit is the context window the server named in a
	// ClassContextOverflow error, 0 when it named none.
	ContextLimit int
	// PromptTokens is the prompt size the server counted, when it said.
	PromptTokens int
	Message      string
	Err          error // the underlying cause, for errors.Is/As
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Provider != "" {
		b.WriteString(e.Provider)
		b.WriteString(": ")
	}
	b.WriteString(string(e.Class))
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts", e.Attempts)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether another attempt may succeed.
func (e *Error) Retryable() bool {
	switch e.Class {
	case ClassRateLimit, ClassServer, ClassTimeout, ClassNetwork:
		return true
	}
	return false
}

// ClassOf returns the class of err if it is (or wraps) an *Error, else "".
func ClassOf(err error) ErrorClass {
	var e *Error
	if errors.As(err, &e) {
		return e.Class
	}
	return ""
}

// maxMessage bounds how much of a provider's error body reaches logs and users.
const maxMessage = 300

// classify turns whatever an attempt returned into an *Error: an *Error from
// post or a stream passes through (unless a context ended, which explains it
// better), anything else is a transport failure. attemptCtx is the
// per-attempt context (with Config.Timeout), parent the caller's.
func classify(provider string, err error, parent, attemptCtx context.Context) *Error {
	var own *Error
	if errors.As(err, &own) && parent.Err() == nil && attemptCtx.Err() == nil {
		return own
	}
	e := &Error{Provider: provider, Err: err}
	switch {
	case parent.Err() != nil:
		e.Class, e.Message = ClassCanceled, parent.Err().Error()
		e.Err = parent.Err()
	case attemptCtx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		e.Class, e.Message = ClassTimeout, "no complete answer within the request timeout"
	case isNetwork(err):
		e.Class, e.Message = ClassNetwork, err.Error()
	default:
		e.Class, e.Message = ClassBadResponse, err.Error()
	}
	e.Message = clip(e.Message, maxMessage)
	return e
}

func classForStatus(status int) ErrorClass {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return ClassAuth
	case status == http.StatusTooManyRequests:
		return ClassRateLimit
	case status == http.StatusRequestTimeout:
		return ClassTimeout
	case status >= 500:
		return ClassServer
	case status >= 400:
		return ClassBadRequest
	}
	return ClassBadResponse
}

func isNetwork(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var oe *net.OpError
	return errors.As(err, &oe) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// retryAfter reads OpenAI's retry-after-ms first (finer), then the standard
// Retry-After in seconds. An HTTP date is ignored: providers send seconds.
func retryAfter(resp *http.Response) time.Duration {
	if resp == nil {
		return 0
	}
	if ms, err := strconv.ParseFloat(resp.Header.Get("Retry-After-Ms"), 64); err == nil && ms >= 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	if s, err := strconv.ParseFloat(resp.Header.Get("Retry-After"), 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	return 0
}

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
