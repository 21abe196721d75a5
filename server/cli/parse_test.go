package cli

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

func TestReadEventsFollowsTheSSEFormat(t *testing.T) {
	stream := ": keep-alive\n\nid: 7\nevent: message.delta\ndata: {\"text\":\"a\"}\n\n" +
		"id: 8\nevent: message\ndata: {\"content\":\ndata: \"ab\"}\n\n" +
		"event: done\ndata: {}\n\n" + "id: 9\nevent: cut\ndata: {\"never\":"
	var got []event
	err := readEvents(strings.NewReader(stream), func(ev event) bool { got = append(got, ev); return true })
	if err != nil {
		t.Fatal(err)
	}
	want := []event{{7, "message.delta", []byte(`{"text":"a"}`)}, {8, "message", []byte("{\"content\":\n\"ab\"}")}, {8, "done", []byte(`{}`)}}
	if len(got) != len(want) {
		t.Fatalf("got %d events, want %d (an unterminated event is not one): %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i].ID != want[i].ID || got[i].Type != want[i].Type || string(got[i].Data) != string(want[i].Data) {
			t.Fatalf("event %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	n := 0
	_ = readEvents(strings.NewReader(stream), func(event) bool { n++; return false })
	if n != 1 {
		t.Fatalf("reading went on after fn returned false: %d", n)
	}
}

func TestServerErrorsReadPlainlyWithTheirExitCodes(t *testing.T) {
	for _, c := range []struct {
		status int
		body   string
		detail string
		code   int
	}{
		{404, `{"detail":"task not found"}`, "task not found", ExitNotFound},
		{403, `{"detail":"missing permission tasks:write","code":"forbidden"}`, "missing permission tasks:write", ExitPermission},
		{422, `{"detail":[{"loc":["body","schedule"],"msg":"not a cron expression","type":"value_error"}]}`, "invalid input: body.schedule: not a cron expression", ExitUsage},
		{409, `{"detail":"task is disabled"}`, "task is disabled", ExitError},
		{502, `<html>bad gateway</html>`, "the server answered 502 Bad Gateway", ExitError},
	} {
		res := &http.Response{StatusCode: c.status, Status: strconv.Itoa(c.status) + " " + http.StatusText(c.status),
			Body: io.NopCloser(strings.NewReader(c.body)), Header: http.Header{}}
		e := readAPIError(res)
		if e.Error() != c.detail || ExitCode(e) != c.code {
			t.Errorf("%d: got %q exit %d, want %q exit %d", c.status, e.Error(), ExitCode(e), c.detail, c.code)
		}
	}
	if ExitCode(nil) != 0 || ExitCode(io.EOF) != ExitError || ExitCode(&Error{Code: ExitUsage, Err: io.EOF}) != ExitUsage {
		t.Fatal("exit code mapping")
	}
}

func TestIDsAreRecognisedAndRelativeTimesRead(t *testing.T) {
	if !looksLikeID("0192f0c4-0000-7000-8000-000000000000") || looksLikeID("prod") || looksLikeID("0192f0c4-0000-7000-8000-00000000000g") {
		t.Fatal("looksLikeID")
	}
	if got := clip("a  long\ttitle here", 8); got != "a long …" {
		t.Fatalf("clip: %q", got)
	}
}
