package cli_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/internal/testkit"
	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// The tests run the built binary as a user would: `opsagent serve` in one
// process (a real SQLite file in a temp dir, the scripted LLM on loopback)
// and the client commands in others, reading their stdout and exit codes.

var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "opsagent-cli-")
	if err != nil {
		panic(err)
	}
	if bin, err = testkit.BuildBinary(dir); err != nil {
		fmt.Fprintf(os.Stderr, "building the binary: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// syncBuf collects a process's output while it runs.
type syncBuf = testkit.SyncBuffer

// srv is a running `opsagent serve`.
type srv struct {
	t    *testing.T
	dir  string
	addr string
	URL  string
	fake *llmfake.Server
	proc *testkit.Process
	env  []string // more of the server's settings (OPSAGENT_...=...)
}

func startServer(t *testing.T, turns ...llmfake.Turn) *srv {
	t.Helper()
	return startServerWith(t, nil, turns...)
}

// startServerWith starts a server with more settings, e.g. a platform's API URL.
func startServerWith(t *testing.T, env []string, turns ...llmfake.Turn) *srv {
	t.Helper()
	s := &srv{t: t, dir: t.TempDir(), fake: llmfake.New(t, turns...), env: env}
	s.start("127.0.0.1:0")
	t.Cleanup(s.stop)
	return s
}

// start runs the server on addr (a fixed address to come back on after a restart).
func (s *srv) start(addr string) {
	s.t.Helper()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + s.dir, "OPSAGENT_LOG_LEVEL=info", "OPSAGENT_SIGNUP=open",
		"OPSAGENT_LLM_PROVIDER=openai", "OPSAGENT_LLM_BASE_URL=" + s.fake.BaseURL(llm.ProviderOpenAI),
		"OPSAGENT_LLM_API_KEY=" + llmfake.APIKey, "OPSAGENT_LLM_MODEL=" + llmfake.Model}
	env = append(env, s.env...)
	s.proc = testkit.StartProcess(s.t, bin, []string{"serve", "--addr", addr, "--data-dir", s.dir, "--allow-local-commands"}, env)
	s.addr, s.URL = s.proc.Addr, s.proc.URL
}

// stop ends the server the way an operator does (SIGTERM) and waits.
func (s *srv) stop() {
	if s.proc != nil {
		s.proc.Stop()
	}
}

// api calls the HTTP API directly (set-up and checks, not what is tested).
func (s *srv) api(method, path, token, project string, body any) (int, map[string]any) {
	s.t.Helper()
	status, raw := testkit.Do(s.t, method, s.URL+path, token, project, body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return status, out
}

func (s *srv) must(want int, method, path, token, project string, body any) map[string]any {
	s.t.Helper()
	got, out := s.api(method, path, token, project, body)
	if got != want {
		s.t.Fatalf("%s %s: got %d, want %d: %v", method, path, got, want, out)
	}
	return out
}

// user is a registered account with a project and an API key.
type user struct {
	email, token, project, key string
}

func (s *srv) newUser(email string) *user {
	s.t.Helper()
	u := &user{email: email}
	u.token = s.must(201, "POST", "/api/auth/register", "", "", map[string]any{"email": email, "password": "correct horse battery"})["access_token"].(string)
	u.project = s.must(201, "POST", "/api/projects", u.token, "", map[string]any{"name": "prod"})["id"].(string)
	u.key = s.must(201, "POST", "/api/api-keys", u.token, "", map[string]any{"name": "ci", "scopes": []string{"*"}})["key"].(string)
	return u
}

// result is what a finished client command left.
type result struct {
	stdout, stderr string
	code           int
}

// baseEnv is the environment of a client process: a fresh home and config
// directory, nothing else of ours.
func baseEnv(home string, extra ...string) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "TERM=dumb"}
	return append(env, extra...)
}

// cliEnv adds the server's URL and, when key is set, OPSAGENT_TOKEN.
func (s *srv) cliEnv(home, key string, extra ...string) []string {
	env := baseEnv(home, "OPSAGENT_SERVER="+s.URL)
	if key != "" {
		env = append(env, "OPSAGENT_TOKEN="+key)
	}
	return append(env, extra...)
}

// run runs the client to its end.
func run(t *testing.T, env []string, args ...string) result {
	t.Helper()
	return runWithInput(t, "", env, args...)
}

// runWithInput runs the client with stdin (a pipe, not a terminal) to its end.
func runWithInput(t *testing.T, stdin string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return r
}

// ok runs the client and requires exit 0.
func ok(t *testing.T, env []string, args ...string) result {
	t.Helper()
	r := run(t, env, args...)
	if r.code != 0 {
		t.Fatalf("opsagent %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

// exits runs the client and requires exit code want and a stderr containing msg.
func exits(t *testing.T, want int, msg string, env []string, args ...string) result {
	t.Helper()
	r := run(t, env, args...)
	if r.code != want || !strings.Contains(r.stderr, msg) {
		t.Fatalf("opsagent %s: exit %d, stderr %q; want exit %d and %q\nstdout: %s", strings.Join(args, " "), r.code, r.stderr, want, msg, r.stdout)
	}
	if strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "panic") {
		t.Fatalf("a Go trace reached the user:\n%s", r.stderr)
	}
	return r
}

// jsonLines parses --json chat output: one event object per line.
type jsonEvent struct {
	ID   int64          `json:"id"`
	Type string         `json:"event"`
	Data map[string]any `json:"data"`
}

func jsonLines(t *testing.T, out string) []jsonEvent {
	t.Helper()
	var evs []jsonEvent
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev jsonEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("not a JSON line: %q (%v)", sc.Text(), err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// checkOnce requires increasing ids (each event once) and a final done.
func checkOnce(t *testing.T, evs []jsonEvent) {
	t.Helper()
	for i := 1; i < len(evs); i++ {
		if evs[i].ID <= evs[i-1].ID {
			t.Fatalf("event %d (%s) after %d: shown twice or out of order", evs[i].ID, evs[i].Type, evs[i-1].ID)
		}
	}
	if len(evs) == 0 || evs[len(evs)-1].Type != "done" {
		t.Fatalf("the stream did not end with done: %v", evs)
	}
}

func decode[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("--json output does not parse: %v\n%s", err, s)
	}
	return v
}
