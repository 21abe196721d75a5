package server

import (
	"net/http"
	"sort"
	"strings"

	"github.com/julienschmidt/httprouter"
)

// AuthMode says who may call a route.
type AuthMode int

const (
	// AuthNone: no credential needed (login, register, public config, webhooks with their own scheme).
	AuthNone AuthMode = iota
	// AuthAny: a signed-in user or an API key.
	AuthAny
	// AuthHuman: a signed-in user only; API keys get 403.
	AuthHuman
)

// Route is one line of the route table. The same value registers the handler,
// checks auth and permission, documents the route in OpenAPI and feeds the MCP bridge.
type Route struct {
	Method  string
	Path    string // OpenAPI style: /api/tasks/{task_id}
	Summary string
	Tags    []string
	Auth    AuthMode
	// Perm is the permission the caller needs in the current org ("" = none beyond Auth).
	Perm Perm
	// Project: the route reads X-Project-ID and resolves the project before the handler runs.
	Project bool
	Body    any // request body type, nil when none
	Query   any // query parameter struct (fields tagged `query:"name"`), nil when none
	Resp    any // response type, nil for an empty body
	Status  int // success status
	// ErrorResp documents error bodies other than the conventions' shapes (status -> type).
	ErrorResp map[int]any
	// MaxBody caps the request body; 0 means the server default.
	MaxBody int64
	// Multipart marks a multipart/form-data body (avatar upload).
	Multipart bool
	// MCP marks the route as bridged to MCP tools (tag mcp-exposed).
	MCP bool
	// RecentAuth: a sensitive account change; the person must have proved
	// their password or a second factor within ReauthWindow.
	RecentAuth bool
	// RawBody: the handler reads the body itself (webhook receiver, SSE).
	RawBody bool
	Handle  func(c *Ctx) error
}

// segment of a route path after normalisation for httprouter.
type compiled struct {
	route    *Route
	segs     []string // original segments, "{x}" for params
	literals int      // literal segments sitting where a sibling has a param
}

// buildRouter registers every route with httprouter. httprouter v1.3.0 panics
// when a literal segment and a parameter share a level (/api/tasks/stats beside
// /api/tasks/{task_id}); the spec needs both. So at every level where any route
// of the same method has a parameter, all routes there are registered under one
// parameter, and a dispatcher picks the route whose literals match, literal
// routes first. This is the only place that knows about it.
func buildRouter(routes []*Route, wrap func(*Route) routeHandler) *httprouter.Router {
	rt := httprouter.New()
	rt.RedirectTrailingSlash = false
	rt.RedirectFixedPath = false
	rt.HandleMethodNotAllowed = true
	byMethod := map[string][]*Route{}
	for _, r := range routes {
		byMethod[r.Method] = append(byMethod[r.Method], r)
	}
	for method, rs := range byMethod {
		segs := make([][]string, len(rs))
		norm := make([][]string, len(rs))
		for i, r := range rs {
			segs[i] = strings.Split(strings.Trim(r.Path, "/"), "/")
			norm[i] = make([]string, len(segs[i]))
		}
		maxDepth := 0
		for _, s := range segs {
			maxDepth = max(maxDepth, len(s))
		}
		// Level by level: routes sharing a normalised prefix and having a param
		// at this level make the level a param for all of them.
		for lvl := 0; lvl < maxDepth; lvl++ {
			groups := map[string][]int{}
			for i, s := range segs {
				if lvl < len(s) {
					key := strings.Join(norm[i][:lvl], "/")
					groups[key] = append(groups[key], i)
				}
			}
			for _, idx := range groups {
				hasParam := false
				for _, i := range idx {
					if isParam(segs[i][lvl]) {
						hasParam = true
					}
				}
				for _, i := range idx {
					if hasParam {
						norm[i][lvl] = ":p" + itoa(lvl)
					} else {
						norm[i][lvl] = segs[i][lvl]
					}
				}
			}
		}
		table := map[string][]*compiled{}
		var keys []string
		for i, r := range rs {
			c := &compiled{route: r, segs: segs[i]}
			for lvl, n := range norm[i] {
				if strings.HasPrefix(n, ":") && !isParam(segs[i][lvl]) {
					c.literals++
				}
			}
			key := "/" + strings.Join(norm[i], "/")
			if _, ok := table[key]; !ok {
				keys = append(keys, key)
			}
			table[key] = append(table[key], c)
		}
		for _, key := range keys {
			cands := table[key]
			sort.SliceStable(cands, func(a, b int) bool { return cands[a].literals > cands[b].literals })
			handlers := make([]routeHandler, len(cands))
			for i, c := range cands {
				handlers[i] = wrap(c.route)
			}
			rt.Handle(method, key, dispatch(cands, handlers))
		}
	}
	return rt
}

// routeHandler serves a matched route with its path parameters (wrap).
type routeHandler func(w http.ResponseWriter, r *http.Request, params []param)

func dispatch(cands []*compiled, handlers []routeHandler) httprouter.Handle {
	return func(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
		path := strings.Trim(r.URL.Path, "/")
		n := strings.Count(path, "/") + 1 // segments, as strings.Split counts them
	next:
		for i, c := range cands {
			if n != len(c.segs) {
				continue
			}
			var params []param
			rest := path
			for _, s := range c.segs {
				part, after, _ := strings.Cut(rest, "/")
				rest = after
				if isParam(s) {
					if part == "" {
						continue next
					}
					params = append(params, param{name: s[1 : len(s)-1], value: part})
				} else if s != part {
					continue next
				}
			}
			handlers[i](w, r, params)
			return
		}
		writeError(w, r, errNotFoundRoute)
	}
}

func isParam(s string) bool { return strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") }

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
