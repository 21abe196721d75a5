package server_test

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// apiOnly are the operations no page should offer: machine-facing routes
// (inbound webhooks, ping URLs, MCP mounts, the device flow's polling,
// OAuth callbacks, probes), the login flows the console drives from
// index.html's own forms, and streams other clients use. Keep one line per
// operation and a reason per group; an operation added to the API needs a
// console home (a page or control calling it) or a line here.
var apiOnly = map[string]string{
	// Senders post here; the secret, the signature or the URL is the credential.
	"POST /api/webhooks/{task_id}":            "inbound webhook receiver",
	"POST /api/billing/stripe/webhook":        "Stripe's webhook",
	"GET /api/webhook-badges/{badge_token}":   "status badge image embedded elsewhere",
	"GET /api/heartbeat-badges/{badge_token}": "status badge image embedded elsewhere",
	"GET /api/ping/{ping_secret}":             "ping URL of cron jobs",
	"POST /api/ping/{ping_secret}":            "ping URL of cron jobs",
	"GET /api/ping/{ping_secret}/start":       "ping URL of cron jobs",
	"POST /api/ping/{ping_secret}/start":      "ping URL of cron jobs",
	"GET /api/ping/{ping_secret}/fail":        "ping URL of cron jobs",
	"POST /api/ping/{ping_secret}/fail":       "ping URL of cron jobs",
	"POST /api/inbound/slack/{channel_id}":    "Slack's callbacks",
	"POST /api/inbound/telegram/{channel_id}": "Telegram's webhook",
	"POST /api/inbound/whatsapp/{channel_id}": "WhatsApp's webhook",
	"GET /api/inbound/whatsapp/{channel_id}":  "WhatsApp's verification handshake",
	// The device flow: the CLI starts and polls; the console approves (auth.js).
	"POST /api/auth/device-code":  "the CLI starts its sign-in",
	"POST /api/auth/device-token": "the CLI polls its sign-in",
	// Probes and the interface description.
	"GET /healthz":          "liveness probe",
	"GET /readyz":           "readiness probe",
	"GET /metrics":          "Prometheus scrape",
	"GET /api/version":      "readiness and version probe",
	"GET /api/openapi.json": "the interface description itself",
	// What the console reaches another way.
	"POST /api/auth/refresh":                  "every call refreshes on 401 (api.js)",
	"POST /api/observability/client-errors":   "the console's error reporter (app.js, plain fetch)",
	"POST /api/observability/client-events":   "telemetry of API clients",
	"GET /api/users/{user_id}/avatar":         "the image behind avatar_url (account.js shows it)",
	"GET /api/sessions":                       "the spec's list; the console lists with /api/sessions/index",
	"GET /api/projects/current":               "lets API clients check their X-Project-ID",
	"POST /api/sessions/{session_ref}/resume": "continues a session by name from the CLI and channels; the console continues in /api/chat",
	"POST /api/commands":                      "opsagent run from the CLI; the console runs commands through the chat",
	"GET /api/connectors/connect":             "connectors dial in (WebSocket)",
}

// noHomeYet are operations people would use that the console does not
// reach yet (issue 38 item 4): the debt, listed so that it shrinks. An
// entry that gets a home fails the test until it is removed here.
var noHomeYet = map[string]bool{}

// apiOnlyPrefixes are whole mounts with the same reason: MCP speaks its own
// protocol to agents and IDEs.
var apiOnlyPrefixes = []string{"/api/mcp", "/mcp"}

// consoleSources is the text of the console's scripts.
func consoleSources(t *testing.T) map[string]string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "web", "dist")
	out := map[string]string{}
	for _, pat := range []string{"assets/*.js", "index.html"} {
		files, _ := filepath.Glob(filepath.Join(dir, pat))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out[filepath.Base(f)] = string(b)
		}
	}
	return out
}

var homeParam = regexp.MustCompile(`\{[^}]+\}`)

// jsLexer collects the string literals of a script: quoted strings and
// the pieces of template literals between their ${...} (which may nest
// templates), skipping comments. Enough of JavaScript for the console's
// own code; its text (apostrophes in prose) never pairs up wrongly.
type jsLexer struct {
	src  string
	lits map[string]bool
}

func (l *jsLexer) add(s string) {
	s, _, _ = strings.Cut(s, "?")
	if strings.HasPrefix(s, "/") {
		l.lits[s] = true
	}
}

// code scans code from i until an unmatched "}" (when nested) or the end;
// it returns the index after that brace.
func (l *jsLexer) code(i int, nested bool) int {
	depth := 0
	for i < len(l.src) {
		c := l.src[i]
		switch {
		case strings.HasPrefix(l.src[i:], "//"):
			if j := strings.IndexByte(l.src[i:], '\n'); j >= 0 {
				i += j
			} else {
				return len(l.src)
			}
		case strings.HasPrefix(l.src[i:], "/*"):
			if j := strings.Index(l.src[i+2:], "*/"); j >= 0 {
				i += j + 4
				continue
			}
			return len(l.src)
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(l.src) && l.src[j] != c && l.src[j] != '\n' {
				if l.src[j] == '\\' {
					j++
				}
				j++
			}
			l.add(l.src[i+1 : min(j, len(l.src))])
			i = j
		case c == '`':
			i = l.template(i + 1)
			continue
		case c == '{':
			depth++
		case c == '}':
			if depth == 0 && nested {
				return i + 1
			}
			depth--
		}
		i++
	}
	return i
}

// template scans a template literal's body from i; it returns the index
// after its closing backtick.
func (l *jsLexer) template(i int) int {
	start := i
	for i < len(l.src) {
		switch {
		case l.src[i] == '\\':
			i += 2
		case l.src[i] == '`':
			l.add(l.src[start:i])
			return i + 1
		case strings.HasPrefix(l.src[i:], "${"):
			l.add(l.src[start:i])
			i = l.code(i+2, true)
			start = i
		default:
			i++
		}
	}
	return i
}

// pathLiterals are the literals of a script that can make up an API path
// (those starting with "/", a query string cut off).
func pathLiterals(src string) map[string]bool {
	l := &jsLexer{src: src, lits: map[string]bool{}}
	l.code(0, false)
	return l.lits
}

// spelled reports whether s is a concatenation of literals ('/webhook' +
// '/rotate-secret', or '/members' + '/').
func spelled(s string, lits map[string]bool) bool {
	ok := make([]bool, len(s)+1)
	ok[0] = true
	for i := 0; i < len(s); i++ {
		if !ok[i] {
			continue
		}
		for j := i + 1; j <= len(s); j++ {
			if lits[s[i:j]] {
				ok[j] = true
			}
		}
	}
	return ok[len(s)]
}

// consoleCalls reports whether a console script calls method path: every
// static piece of the path between its ids is spelled by the script's
// literals, the first starting with the path's own first literal
// ('/api/tasks/' + id + '/webhook' + '/rotate-secret' or a template
// literal), and a method other than GET is named in that script.
func consoleCalls(src string, lits map[string]bool, method, path string) bool {
	if method != "GET" && !regexp.MustCompile(`method:\s*['"]`+method+`['"]`).MatchString(src) {
		return false
	}
	for i, p := range homeParam.Split(path, -1) {
		if p == "" {
			continue
		}
		if i == 0 {
			// The call starts with a literal holding the path's head.
			head := false
			for l := range lits {
				if strings.HasPrefix(p, l) && len(l) > len("/api/") && spelled(p[len(l):], lits) || l == p {
					head = true
					break
				}
			}
			if !head {
				return false
			}
			continue
		}
		if !spelled(p, lits) {
			return false
		}
	}
	return true
}

// Every operation of the API has a home in the console (a page or control
// that calls it) or a line on the API-only list above.
func TestEveryOperationHasAHome(t *testing.T) {
	env := newEnv(t)
	doc := env.newClient().must(200, "GET", "/api/openapi.json", nil).JSON()
	srcs := consoleSources(t)
	lits := map[string]map[string]bool{}
	for name, src := range srcs {
		lits[name] = pathLiterals(src)
	}
	var missing, stale, housed []string
	seen := map[string]bool{}
	for path, item := range doc["paths"].(map[string]any) {
		for m := range item.(map[string]any) {
			method := strings.ToUpper(m)
			if !map[string]bool{"GET": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true}[method] {
				continue
			}
			op := method + " " + path
			seen[op] = true
			if _, ok := apiOnly[op]; ok {
				continue
			}
			machine := false
			for _, p := range apiOnlyPrefixes {
				if path == p || strings.HasPrefix(path, p+"/") {
					machine = true
				}
			}
			if machine {
				continue
			}
			home := false
			for name, src := range srcs {
				if consoleCalls(src, lits[name], method, path) {
					home = true
					break
				}
			}
			if home && noHomeYet[op] {
				housed = append(housed, op)
			}
			if !home && !noHomeYet[op] {
				missing = append(missing, op)
			}
		}
	}
	for op := range apiOnly {
		if !seen[op] {
			stale = append(stale, op)
		}
	}
	for op := range noHomeYet {
		if !seen[op] {
			stale = append(stale, op)
		}
	}
	sort.Strings(missing)
	sort.Strings(stale)
	sort.Strings(housed)
	if len(missing) > 0 {
		t.Errorf("%d operation(s) have no console home and are not on the API-only list (server/console_homes_test.go): give each a page or control, or add it to apiOnly with the reason:\n  %s",
			len(missing), strings.Join(missing, "\n  "))
	}
	if len(housed) > 0 {
		t.Errorf("these now have a console home: remove them from noHomeYet:\n  %s", strings.Join(housed, "\n  "))
	}
	if len(stale) > 0 {
		t.Errorf("apiOnly or noHomeYet entries naming no operation of the API (renamed or removed): %v", stale)
	}
}
