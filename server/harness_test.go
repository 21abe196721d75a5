package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"github.com/opsagent/opsagent/server/sandbox"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsagent/opsagent/internal/testkit"
	"github.com/opsagent/opsagent/internal/testsrv"
	"github.com/opsagent/opsagent/server"
	"github.com/opsagent/opsagent/store"
)

// TestMain lets four parallel tests run at once unless -parallel says
// otherwise: each test has its own server, and most of its time goes to
// fsyncs, timers and loopback round trips, so more than GOMAXPROCS (two on
// the CI machine) in flight keeps the cores busy.
func TestMain(m *testing.M) {
	sandbox.Init() // commands the tests' servers and connectors run re-execute this binary as the launcher
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		_ = flag.Set("test.parallel", "4")
	}
	os.Exit(m.Run())
}

// testEnv is a real server on a loopback port over a real SQLite file in a
// temp dir. Tests talk HTTP to it.
type testEnv struct {
	t     testing.TB
	URL   string
	Srv   *server.Server
	DB    *store.DB
	Dir   string
	Cfg   server.Config
	mu    sync.Mutex
	now   time.Time
	fixed bool // the manual clock is on (UseClock)
	Logs  *testkit.SyncBuffer
	close func()
}

// newEnv starts a server; opts adjust the config before it starts.
func newEnv(t testing.TB, opts ...func(*server.Config)) *testEnv {
	t.Helper()
	dir := t.TempDir()
	return startEnv(t, dir, opts...)
}

func startEnv(t testing.TB, dir string, opts ...func(*server.Config)) *testEnv {
	t.Helper()
	env := &testEnv{t: t, now: time.Now().UTC()}
	// The clock is installed before anything runs: swapping it later races
	// with the background writers. UseClock only switches it to manual.
	ts := testsrv.Start(t, dir, testsrv.Options{Clock: env.clock, Config: opts, OpenStore: func(ctx context.Context, dir string) (*store.DB, error) {
		return openEnvStore(ctx, t, dir)
	}})
	env.URL, env.Srv, env.DB, env.Dir, env.Cfg, env.Logs, env.close = ts.URL, ts.Srv, ts.DB, ts.Dir, ts.Cfg, ts.Logs, ts.Close
	logErrorsOnFailure(t, ts.Logs)
	return env
}

// Restart stops the server and starts a new one on the same data directory.
func (e *testEnv) Restart(opts ...func(*server.Config)) *testEnv {
	e.close()
	return startEnv(e.t, e.Dir, opts...)
}

// clock is the server's clock: real time until UseClock, then manual.
func (e *testEnv) clock() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.fixed {
		return time.Now().UTC()
	}
	return e.now
}

// UseClock switches the server to a manual clock starting now.
func (e *testEnv) UseClock() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.now, e.fixed = time.Now().UTC(), true
}

// Advance moves the manual clock.
func (e *testEnv) Advance(d time.Duration) {
	e.mu.Lock()
	e.now = e.now.Add(d)
	e.mu.Unlock()
}

// client is one HTTP caller: a cookie jar (like a browser) and an optional
// bearer token or API key, and an optional project header.
type client struct {
	env     *testEnv
	hc      *http.Client
	Token   string
	Project string
	Email   string
	Header  http.Header
}

func (e *testEnv) newClient() *client {
	jar, _ := cookiejar.New(nil)
	return &client{env: e, hc: &http.Client{Jar: jar, Timeout: 30 * time.Second}, Header: http.Header{}}
}

type resp struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body as an object.
func (r *resp) JSON() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(r.Body, &m)
	return m
}

// List decodes the body as an array of objects.
func (r *resp) List() []map[string]any {
	var m []map[string]any
	_ = json.Unmarshal(r.Body, &m)
	return m
}

func (r *resp) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// do sends a request; body may be nil, a string/[]byte (sent raw) or a value (JSON).
func (c *client) do(method, path string, body any) *resp {
	c.env.t.Helper()
	var rd io.Reader
	ct := ""
	switch b := body.(type) {
	case nil:
	case string:
		rd, ct = strings.NewReader(b), "application/json"
	case []byte:
		rd, ct = bytes.NewReader(b), "application/json"
	default:
		j, err := json.Marshal(b)
		if err != nil {
			c.env.t.Fatal(err)
		}
		rd, ct = bytes.NewReader(j), "application/json"
	}
	req, err := http.NewRequest(method, c.env.URL+path, rd)
	if err != nil {
		c.env.t.Fatal(err)
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	if c.Project != "" {
		req.Header.Set("X-Project-ID", c.Project)
	}
	for k, vs := range c.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	res, err := c.hc.Do(req)
	if err != nil {
		c.env.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return &resp{Status: res.StatusCode, Header: res.Header, Body: b}
}

// must sends a request and fails the test unless the status is want.
func (c *client) must(want int, method, path string, body any) *resp {
	c.env.t.Helper()
	r := c.do(method, path, body)
	if r.Status != want {
		c.env.t.Fatalf("%s %s: got status %d, want %d; body %s", method, path, r.Status, want, r.Body)
	}
	return r
}

// register creates an account and returns a client holding its access token.
func (e *testEnv) register(email string) *client {
	e.t.Helper()
	c := e.newClient()
	r := c.must(201, "POST", "/api/auth/register", map[string]any{"email": email, "password": "correct horse battery", "name": strings.Split(email, "@")[0]})
	c.Token = r.JSON()["access_token"].(string)
	c.Email = email
	return c
}

// cookie returns a cookie the client holds for path.
func (c *client) cookie(name, path string) string {
	u, _ := http.NewRequest("GET", c.env.URL+path, nil)
	for _, ck := range c.hc.Jar.Cookies(u.URL) {
		if ck.Name == name {
			return ck.Value
		}
	}
	return ""
}

// wantValidation asserts a 422 whose first error sits at loc.
func wantValidation(t *testing.T, r *resp, loc ...any) {
	t.Helper()
	if r.Status != 422 {
		t.Fatalf("got status %d, want 422; body %s", r.Status, r.Body)
	}
	var body struct {
		Detail []struct {
			Loc  []any  `json:"loc"`
			Msg  string `json:"msg"`
			Type string `json:"type"`
		} `json:"detail"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil || len(body.Detail) == 0 {
		t.Fatalf("422 body not in FastAPI shape: %s", r.Body)
	}
	want, _ := json.Marshal(loc)
	for _, d := range body.Detail {
		got, _ := json.Marshal(d.Loc)
		if string(got) == string(want) {
			if d.Msg == "" || d.Type == "" {
				t.Fatalf("error at %s lacks msg or type: %s", got, r.Body)
			}
			return
		}
	}
	t.Fatalf("got 422 %s, want an error at %s", r.Body, want)
}

// openSignup lets anyone register, so a test can hold several accounts
// (the default closes sign-up once the first account exists).
func openSignup(c *server.Config) { c.Signup = "open" }

// login signs in on a fresh client (own cookie jar) and returns it with its access token.
func (e *testEnv) login(email, password string) *client {
	e.t.Helper()
	c := e.newClient()
	r := c.must(200, "POST", "/api/auth/login", map[string]any{"email": email, "password": password})
	c.Token, _ = r.JSON()["access_token"].(string)
	c.Email = email
	return c
}

// mailTokens returns the tokens of every outbox message to addr whose subject
// contains subject, oldest first (the outbox writes one .eml file per message).
func (e *testEnv) mailTokens(addr, subject string) []string {
	e.t.Helper()
	server.WaitBackgroundForTest(e.Srv) // mail is sent after the answer
	entries, err := os.ReadDir(filepath.Join(e.Dir, "outbox"))
	if err != nil {
		e.t.Fatalf("read outbox: %v", err)
	}
	var out []string
	for _, ent := range entries {
		if !strings.HasSuffix(ent.Name(), ".eml") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(e.Dir, "outbox", ent.Name()))
		if err != nil {
			e.t.Fatal(err)
		}
		msg, err := mail.ReadMessage(bytes.NewReader(b))
		if err != nil {
			e.t.Fatalf("outbox file %s is not RFC 5322: %v", ent.Name(), err)
		}
		if msg.Header.Get("To") != addr || !strings.Contains(msg.Header.Get("Subject"), subject) {
			continue
		}
		body, _ := io.ReadAll(msg.Body)
		_, tok, ok := strings.Cut(string(body), "Token: ")
		if !ok {
			e.t.Fatalf("mail %s carries no token: %s", ent.Name(), body)
		}
		out = append(out, strings.TrimSpace(tok))
	}
	return out
}

// lastMailToken is the token of the newest message to addr about subject.
func (e *testEnv) lastMailToken(addr, subject string) string {
	e.t.Helper()
	toks := e.mailTokens(addr, subject)
	if len(toks) == 0 {
		e.t.Fatalf("no mail to %s about %q in the outbox", addr, subject)
	}
	return toks[len(toks)-1]
}

// send sends a prepared request with the client's credentials and cookies.
func (c *client) send(req *http.Request) *resp {
	c.env.t.Helper()
	if c.Token != "" && req.Header.Get("Authorization") == "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	res, err := c.hc.Do(req)
	if err != nil {
		c.env.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return &resp{Status: res.StatusCode, Header: res.Header, Body: b}
}

// userID returns the id of the client's account.
func (c *client) userID() string {
	c.env.t.Helper()
	id, _ := c.must(200, "GET", "/api/auth/me", nil).JSON()["id"].(string)
	return id
}

// mustRequest builds a request with a raw body of the given content type.
func mustRequest(t *testing.T, method, url, contentType, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return req
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

func ioNopCloser(r io.Reader) io.ReadCloser { return io.NopCloser(r) }

func decodeJSON(r io.Reader, v any) error { return json.NewDecoder(r).Decode(v) }
