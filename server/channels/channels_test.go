package channels

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestDoRetriesRateLimitsAndTemporaryFailuresOnly(t *testing.T) {
	saved := BaseBackoff
	BaseBackoff = time.Millisecond
	defer func() { BaseBackoff = saved }()
	ctx := context.Background()
	cases := []struct {
		name  string
		errs  []error
		calls int
		ok    bool
	}{
		{"429 then ok", []error{&RateLimited{RetryAfter: 2 * time.Millisecond}, nil}, 2, true},
		{"5xx twice then ok", []error{&Temporary{Err: errors.New("502")}, &Temporary{Err: errors.New("503")}, nil}, 3, true},
		{"permanent", []error{errors.New("channel_not_found")}, 1, false},
		{"429 longer than MaxRetryAfter is not waited for", []error{&RateLimited{RetryAfter: time.Hour}}, 1, false},
		{"always 5xx stops after MaxAttempts", []error{&Temporary{Err: errors.New("a")}, &Temporary{Err: errors.New("b")}, &Temporary{Err: errors.New("c")}, &Temporary{Err: errors.New("d")}, nil}, 4, false},
	}
	for _, c := range cases {
		n := 0
		err := Do(ctx, func() error { e := c.errs[n]; n++; return e })
		if n != c.calls || (err == nil) != c.ok {
			t.Errorf("%s: %d calls, err %v; want %d calls, ok %v", c.name, n, err, c.calls, c.ok)
		}
	}
}

func TestDoHonoursRetryAfter(t *testing.T) {
	start, n := time.Now(), 0
	err := Do(context.Background(), func() error {
		n++
		if n == 1 {
			return &RateLimited{RetryAfter: 300 * time.Millisecond}
		}
		return nil
	})
	if err != nil || n != 2 || time.Since(start) < 300*time.Millisecond {
		t.Fatalf("err %v after %d calls in %v; want the retry after Retry-After", err, n, time.Since(start))
	}
}

func TestButtonDataAndCommentPromptRoundTrip(t *testing.T) {
	id := "01a2129f-e27a-793c-b8e9-8f682bd798a9"
	for _, d := range []string{Approve, Deny, Comment} {
		got, gid, ok := ParseButtonData(ButtonData(d, id))
		if !ok || got != d || gid != id {
			t.Errorf("%s: %q %q %v", d, got, gid, ok)
		}
	}
	if _, _, ok := ParseButtonData("x:" + id); ok {
		t.Error("unknown button data accepted")
	}
	if got, ok := ApprovalOfPrompt(CommentPrompt(id)); !ok || got != id {
		t.Errorf("prompt round trip: %q %v", got, ok)
	}
	if got := Clip("ééé", 5); got != "é…" {
		t.Errorf("clip keeps runes whole: %q", got)
	}
}
