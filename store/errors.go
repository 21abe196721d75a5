package store

import (
	"errors"
	"fmt"
)

// Error codes shared by the whole product. The server maps each to one HTTP status in one table.
const (
	EInvalid      = "invalid"
	EUnauthorized = "unauthorized"
	EForbidden    = "forbidden"
	ENotFound     = "not_found"
	EConflict     = "conflict"
	ERateLimited  = "rate_limited"
	ETooLarge     = "too_large"
	EInternal     = "internal"
)

// Error is the one application error type. Message is safe to show to clients;
// anything else (the wrapped cause) goes to the log only.
type Error struct {
	Code    string
	Message string
	// Reason is an optional machine-readable snake_case detail code ("sole_owner").
	Reason string
	Err    error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return e.Code + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an application error with a client-safe message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// NotFound is the error every lookup returns for a missing or foreign row, so
// another tenant's id and a random id read the same.
func NotFound(what string) *Error { return &Error{Code: ENotFound, Message: what + " not found"} }

// ErrorCode returns the code of err, or EInternal for errors of unknown kind.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}

// IsNotFound reports whether err is a not-found application error.
func IsNotFound(err error) bool { return ErrorCode(err) == ENotFound }
