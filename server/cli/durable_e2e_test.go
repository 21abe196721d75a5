package cli_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// Runs that survive restarts (issue 34), on the built binary: a kill -9
// while a command runs, an approval decided while the server was stopping,
// and a follow-up sent the moment a turn's stream ends.

// followSSE watches a session's events as the console does: GET
// /api/sessions/{id}/events, reconnecting with Last-Event-ID whenever the
// stream drops (the server restarting), until done. It returns every event
// seen.
func followSSE(t *testing.T, s *srv, u *user, sid string) <-chan []jsonEvent {
	t.Helper()
	out := make(chan []jsonEvent, 1)
	go func() {
		var seen []jsonEvent
		var last int64
		defer func() { out <- seen }()
		for end := time.Now().Add(90 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			req, _ := http.NewRequest("GET", s.URL+"/api/sessions/"+sid+"/events", nil)
			req.Header.Set("Authorization", "Bearer "+u.token)
			req.Header.Set("X-Project-ID", u.project)
			req.Header.Set("Last-Event-ID", strconv.FormatInt(last, 10))
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				continue
			}
			done := false
			sc := bufio.NewScanner(res.Body)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			var ev jsonEvent
			for sc.Scan() {
				line := sc.Text()
				switch {
				case strings.HasPrefix(line, "id: "):
					ev.ID, _ = strconv.ParseInt(strings.TrimPrefix(line, "id: "), 10, 64)
				case strings.HasPrefix(line, "event: "):
					ev.Type = strings.TrimPrefix(line, "event: ")
				case strings.HasPrefix(line, "data: "):
					_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.Data)
				case line == "" && ev.Type != "":
					seen = append(seen, ev)
					last = ev.ID
					done = done || ev.Type == "done"
					ev = jsonEvent{}
				}
			}
			res.Body.Close()
			if done {
				return
			}
		}
	}()
	return out
}

// waitSession polls a session until its status is want.
func waitSession(t *testing.T, s *srv, u *user, sid, want string) map[string]any {
	t.Helper()
	var sess map[string]any
	for end := time.Now().Add(60 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if st, out := s.api("GET", "/api/sessions/detail/"+sid, u.token, u.project, nil); st == 200 {
			sess = out
			if sess["status"] == want && sess["waiting_approval"] != true {
				return sess
			}
		}
	}
	t.Fatalf("session %s did not become %s: %v", sid, want, sess)
	return nil
}

func sessionEvents(t *testing.T, s *srv, u *user, sid string) []jsonEvent {
	t.Helper()
	req, _ := http.NewRequest("GET", s.URL+"/api/sessions/"+sid+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+u.token)
	req.Header.Set("X-Project-ID", u.project)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var evs []jsonEvent
	var ev jsonEvent
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			ev.ID, _ = strconv.ParseInt(strings.TrimPrefix(line, "id: "), 10, 64)
		case strings.HasPrefix(line, "event: "):
			ev.Type = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.Data)
		case line == "" && ev.Type != "":
			evs = append(evs, ev)
			ev = jsonEvent{}
		}
	}
	return evs
}

func markerLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// approveOnly approves the session's one pending approval.
func approveOnly(t *testing.T, s *srv, u *user, sid string) {
	t.Helper()
	list := s.must(200, "GET", "/api/approvals?status=pending", u.token, u.project, nil)
	for _, it := range list["items"].([]any) {
		a := it.(map[string]any)
		if a["session_id"] == sid {
			s.must(200, "POST", "/api/approvals/"+a["id"].(string)+"/approve", u.token, u.project, map[string]any{"comment": "go"})
			return
		}
	}
	t.Fatalf("no pending approval for session %s: %v", sid, list)
}

// kill -9 while an approved command runs: after the restart the command has
// run exactly once (a marker file counts its runs), and the model was told
// the call was interrupted with an unknown outcome, as the session shows.
func TestKillDuringACommandDoesNotRunItTwice(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "marker")
	s := startServer(t,
		llmfake.ToolCall("run_command", `{"command":"echo ran >> `+marker+` && sleep 5","target":"server"}`),
		llmfake.Text("I will check whether the cleanup ran before trying again."),
	)
	u := s.newUser("ops@example.com")
	r := ok(t, s.cliEnv(t.TempDir(), u.key), "chat", "--json", "clean the cache on the server")
	var sid string
	for _, ev := range jsonLines(t, r.stdout) {
		if ev.Type == "session" {
			sid = ev.Data["session_id"].(string)
		}
	}
	approveOnly(t, s, u, sid)
	for end := time.Now().Add(20 * time.Second); markerLines(t, marker) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the approved command never started")
		}
	}
	s.proc.Kill()
	s.start(s.addr)
	waitSession(t, s, u, sid, "completed")
	if n := markerLines(t, marker); n != 1 {
		t.Fatalf("the command ran %d times, want exactly once", n)
	}
	reqs := s.fake.Requests()
	last := reqs[len(reqs)-1]
	results := last.ToolResults()
	if len(results) != 1 || !strings.Contains(results[0].Content, "interrupted; outcome unknown: check before retrying") {
		t.Fatalf("the model was not told the call was interrupted: %+v", results)
	}
	evs := sessionEvents(t, s, u, sid)
	checkOnce(t, evs)
	shown := false
	for _, ev := range evs {
		if ev.Type == "tool.result" && strings.Contains(ev.Data["output"].(string), "outcome unknown") {
			shown = true
		}
	}
	if !shown || !hasEvent(evs, "run.resumed") {
		t.Fatalf("the session does not show the interrupted call: %v", evs)
	}
}

// An approval decided while the server is stopping (its resume refused) is
// honoured after the restart, once: the approved command runs exactly once
// and the session completes. New turns asked for while it stops get 503.
func TestApprovalDecidedWhileDownIsHonouredOnce(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "marker")
	s := startServerWith(t, []string{"OPSAGENT_SHUTDOWN_GRACE=4s", "OPSAGENT_AGENT_TURNS_PER_MINUTE=10000"},
		llmfake.ToolCall("run_command", `{"command":"echo ran >> `+marker+`","target":"server"}`),
		llmfake.Hang(), // the other session's model call: it keeps the server draining
		llmfake.Always(llmfake.Text("Done.")),
	)
	u := s.newUser("ops@example.com")
	env := s.cliEnv(t.TempDir(), u.key)
	r := ok(t, env, "chat", "--json", "append to the marker")
	var waiting string
	for _, ev := range jsonLines(t, r.stdout) {
		if ev.Type == "session" {
			waiting = ev.Data["session_id"].(string)
		}
	}
	// A second chat hangs in its model call: SIGTERM then drains for the grace.
	req, _ := http.NewRequest("POST", s.URL+"/api/chat", strings.NewReader(`{"message":"and look at the logs"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+u.token)
	req.Header.Set("X-Project-ID", u.project)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	for end := time.Now().Add(10 * time.Second); len(s.fake.Requests()) < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the second chat did not reach the model")
		}
	}
	if err := s.proc.Cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	// Draining: a new turn is refused with 503 and Retry-After.
	var st int
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		rq, _ := http.NewRequest("POST", s.URL+"/api/chat", strings.NewReader(`{"message":"hello"}`))
		rq.Header.Set("Content-Type", "application/json")
		rq.Header.Set("Authorization", "Bearer "+u.token)
		rq.Header.Set("X-Project-ID", u.project)
		rs, err := http.DefaultClient.Do(rq)
		if err != nil {
			continue
		}
		rs.Body.Close()
		if st = rs.StatusCode; st == 503 {
			if rs.Header.Get("Retry-After") == "" {
				t.Fatal("503 without Retry-After")
			}
			break
		}
	}
	if st != 503 {
		t.Fatalf("a new turn while draining: got %d, want 503", st)
	}
	approveOnly(t, s, u, waiting)
	s.proc.Stop()
	if n := markerLines(t, marker); n != 0 {
		t.Fatalf("the command ran while the server was stopping: %d", n)
	}
	s.start(s.addr)
	waitSession(t, s, u, waiting, "completed")
	time.Sleep(500 * time.Millisecond) // a second resume, were there one, would have run by now
	if n := markerLines(t, marker); n != 1 {
		t.Fatalf("the approved command ran %d times, want exactly once", n)
	}
}

// A follow-up sent the moment a turn's stream ends is accepted: the session
// is settled before the last event is sent, never 409 session_running.
func TestFollowUpRightAfterDoneIsAccepted(t *testing.T) {
	s := startServerWith(t, []string{"OPSAGENT_AGENT_TURNS_PER_MINUTE=10000"}, llmfake.Always(llmfake.Text("ok")))
	u := s.newUser("ops@example.com")
	sid := ""
	for i := 0; i < 30; i++ {
		body := `{"message":"turn ` + strconv.Itoa(i) + `"}`
		if sid != "" {
			body = `{"message":"turn ` + strconv.Itoa(i) + `","session_id":"` + sid + `"}`
		}
		req, _ := http.NewRequest("POST", s.URL+"/api/chat", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+u.token)
		req.Header.Set("X-Project-ID", u.project)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != 200 {
			var b map[string]any
			_ = json.NewDecoder(res.Body).Decode(&b)
			res.Body.Close()
			t.Fatalf("turn %d sent right after the last one's done: got %d %v, want 200", i, res.StatusCode, b)
		}
		sid = res.Header.Get("X-Session-ID")
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if sc.Text() == "event: done" {
				break // the next turn goes out now, before the stream's end is even read
			}
		}
		res.Body.Close()
	}
}
