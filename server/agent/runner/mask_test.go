package runner

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server/agent"
)

// A masked refusal is still a refusal (the loop marks it blocked and answers
// in the platform's words), with the secret masked in its reason; other
// errors keep their cause for errors.Is.
func TestMaskErrorKeepsRefusalsAndCauses(t *testing.T) {
	mask := func(s string) string { return strings.ReplaceAll(s, "s3cret", "***") }
	err := maskError(&agent.Refusal{Reason: "host refused s3cret"}, mask)
	var refused *agent.Refusal
	if !errors.As(err, &refused) || refused.Reason != "host refused ***" {
		t.Fatalf("refusal: got %T %q, want *agent.Refusal with the masked reason", err, err)
	}
	err = maskError(errors.Join(context.Canceled, errors.New("s3cret in text")), mask)
	if !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("other error: got %q (is canceled: %v)", err, errors.Is(err, context.Canceled))
	}
}
