package rag

import (
	"errors"
	"fmt"
)

// Sentinel errors, for the server to map onto status codes with errors.Is: ErrNotFound is a 404, ErrClosed a
// 503, every other one a 422 (the *Error that wraps it names the offending field).
var (
	ErrInvalidName       = errors.New("invalid document name")
	ErrInvalidScope      = errors.New("invalid organization or project id")
	ErrUnknownCollection = errors.New("unknown collection")
	ErrNotText           = errors.New("content is not UTF-8 text")
	ErrTooLarge          = errors.New("content too large")
	ErrInvalidTags       = errors.New("invalid tags")
	ErrInvalidQuery      = errors.New("invalid query")
	ErrNotFound          = errors.New("document not found")
	ErrClosed            = errors.New("rag store closed")
	// ErrExists: Create found a document of that name (a 409).
	ErrExists = errors.New("a document with this name exists")
)

// Error is the one error type that leaves this package for a caller's mistake. Kind is one of the sentinel
// errors above (errors.Is matches it), Field names the input at fault ("name", "collection", "content",
// "tags", "text", "limit", "org_id", "project_id") so the server can build a 422 location.
type Error struct {
	Kind   error
	Field  string
	Detail string
}

func (e *Error) Error() string {
	if e.Detail == "" {
		return fmt.Sprintf("rag: %s: %v", e.Field, e.Kind)
	}
	return fmt.Sprintf("rag: %s: %v: %s", e.Field, e.Kind, e.Detail)
}

// Unwrap lets errors.Is(err, ErrInvalidName) and friends work.
func (e *Error) Unwrap() error { return e.Kind }

func invalid(kind error, field, format string, args ...any) error {
	return &Error{Kind: kind, Field: field, Detail: fmt.Sprintf(format, args...)}
}
