package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bridgeTool is one route of the table tagged MCP, seen as a tool: its name
// is the route's OpenAPI operation id and its input schema is built by the
// same generator as the OpenAPI document, from the path parameters, the
// query struct and the body struct. Arguments are split back into those
// three places and the route is called through the real pipeline.
type bridgeTool struct {
	route *Route
	key   string // "GET /api/tasks/{task_id}"
	tool  *mcp.Tool
	// pathArgs are the path parameters the caller supplies; orgPath is set
	// when {org_id} is filled with the caller's org (the org mount).
	pathArgs []string
	orgPath  bool
	query    map[string]bool
	// bodyFields are the body's fields, given as top-level arguments; when
	// they would collide with a path or query name the whole body is one
	// argument named "body" instead (nestedBody).
	bodyFields map[string]bool
	nestedBody bool
	// unsafe routes take idempotency_key, sent as the Idempotency-Key header.
	unsafe bool
}

const idempotencyArg = "idempotency_key"

// buildBridge makes the tools of one mount ("project": routes that read
// X-Project-ID; "org": the other authenticated ones). Routes whose body is
// not JSON (multipart, raw) cannot be described as arguments: they are
// returned as skipped so a test can insist there are none.
func buildBridge(routes []*Route, mount string) (tools []*bridgeTool, skipped []string) {
	for _, rt := range routes {
		if !rt.MCP || rt.Auth == AuthNone || rt.Project != (mount == "project") {
			continue
		}
		if rt.Multipart || rt.RawBody {
			skipped = append(skipped, rt.Method+" "+rt.Path)
			continue
		}
		bt, err := newBridgeTool(rt, mount)
		if err != nil {
			skipped = append(skipped, rt.Method+" "+rt.Path+": "+err.Error())
			continue
		}
		tools = append(tools, bt)
	}
	sort.Slice(tools, func(i, j int) bool { return tools[i].tool.Name < tools[j].tool.Name })
	return tools, skipped
}

func newBridgeTool(rt *Route, mount string) (*bridgeTool, error) {
	bt := &bridgeTool{route: rt, key: rt.Method + " " + rt.Path, query: map[string]bool{}, bodyFields: map[string]bool{},
		unsafe: rt.Method != http.MethodGet && rt.Method != http.MethodHead}
	g := &schemaGen{defs: map[string]any{}}
	props := map[string]any{}
	var required []string
	for _, seg := range strings.Split(rt.Path, "/") {
		if !isParam(seg) {
			continue
		}
		name := seg[1 : len(seg)-1]
		if mount == "org" && name == "org_id" {
			bt.orgPath = true
			continue
		}
		sch := map[string]any{"type": "string", "description": "path parameter"}
		if strings.HasSuffix(name, "_id") {
			sch["format"] = "uuid"
		}
		props[name] = sch
		required = append(required, name)
		bt.pathArgs = append(bt.pathArgs, name)
	}
	if rt.Query != nil {
		for _, p := range g.queryParams(reflect.TypeOf(rt.Query)) {
			pm := p.(map[string]any)
			name := pm["name"].(string)
			sch := pm["schema"].(map[string]any)
			if d, ok := pm["description"]; ok {
				sch["description"] = d
			}
			props[name] = sch
			bt.query[name] = true
			if pm["required"] == true {
				required = append(required, name)
			}
		}
	}
	if bt.unsafe {
		props[idempotencyArg] = map[string]any{"type": "string", "maxLength": 200,
			"description": "sent as the Idempotency-Key header: routes that honour it (task trigger, session resume) answer a retry with the first result"}
	}
	if rt.Body != nil {
		bodyType := reflect.TypeOf(rt.Body)
		for bodyType.Kind() == reflect.Pointer {
			bodyType = bodyType.Elem()
		}
		flat := bodyType.Kind() == reflect.Struct
		var bs map[string]any
		if flat {
			bs = g.structSchema(bodyType)
			for name := range bs["properties"].(map[string]any) {
				if _, clash := props[name]; clash || name == "body" {
					flat = false
				}
			}
		}
		if flat {
			for name, sch := range bs["properties"].(map[string]any) {
				props[name] = sch
				bt.bodyFields[name] = true
			}
			if req, ok := bs["required"].([]string); ok {
				required = append(required, req...)
			}
		} else {
			bt.nestedBody = true
			props["body"] = g.schema(bodyType)
			required = append(required, "body")
		}
	}
	schema := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		sort.Strings(required)
		schema["required"] = required
	}
	if len(g.defs) > 0 {
		schema["$defs"] = g.defs
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	// The generator writes OpenAPI references; a tool schema stands alone.
	raw = bytes.ReplaceAll(raw, []byte(`"#/components/schemas/`), []byte(`"#/$defs/`))
	var in jsonschema.Schema
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	desc := rt.Summary + "\n\nREST " + bt.key
	if rt.Perm != "" {
		desc += " (permission " + string(rt.Perm) + ")"
	}
	if rt.Project {
		desc += "; runs in this mount's project"
	}
	bt.tool = &mcp.Tool{Name: operationID(rt), Title: rt.Summary, Description: desc, InputSchema: &in, Annotations: routeAnnotations(rt)}
	return bt, nil
}

// routeAnnotations are the hints a client shows before a call.
func routeAnnotations(rt *Route) *mcp.ToolAnnotations {
	no, yes := false, true
	a := &mcp.ToolAnnotations{Title: rt.Summary, OpenWorldHint: &no}
	switch rt.Method {
	case http.MethodGet, http.MethodHead:
		a.ReadOnlyHint, a.IdempotentHint = true, true
	case http.MethodDelete:
		a.DestructiveHint, a.IdempotentHint = &yes, true
	case http.MethodPut:
		a.DestructiveHint, a.IdempotentHint = &no, true
	default:
		a.DestructiveHint = &no
	}
	return a
}

// handle calls the route with the arguments of one tools/call.
func (bt *bridgeTool) handle(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	m, err := callFrom(ctx)
	if err != nil {
		return nil, err
	}
	params, query, body, header, err := bt.split(req.Params.Arguments, m)
	if err != nil {
		recordFrom(ctx).reject(http.StatusUnprocessableEntity, err.Error())
		return argError(err), nil
	}
	res, err := m.dispatch(ctx, bt.key, params, query, body, header)
	if err != nil {
		return argError(err), nil
	}
	return toolResult(res), nil
}

// split puts each argument where the route reads it. Unknown arguments are
// refused: a misspelt filter silently ignored would answer the wrong question.
func (bt *bridgeTool) split(raw json.RawMessage, m *mcpCall) (map[string]string, url.Values, []byte, http.Header, error) {
	args := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(raw)) > 0 && string(bytes.TrimSpace(raw)) != "null" {
		if err := json.Unmarshal(raw, &args); err != nil {
			return nil, nil, nil, nil, fmt.Errorf("arguments must be a JSON object: %v", err)
		}
	}
	params := map[string]string{}
	if bt.orgPath {
		params["org_id"] = m.c.ID.OrgID
	}
	query := url.Values{}
	header := http.Header{}
	bodyObj := map[string]json.RawMessage{}
	var body []byte
	names := make([]string, 0, len(args))
	for name := range args {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		v := args[name]
		switch {
		case contains(bt.pathArgs, name):
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, nil, nil, nil, fmt.Errorf("argument %s: must be a string", name)
			}
			params[name] = s
		case bt.query[name]:
			vals, err := queryValues(v)
			if err != nil {
				return nil, nil, nil, nil, fmt.Errorf("argument %s: %v", name, err)
			}
			if len(vals) > 0 {
				query[name] = vals
			}
		case bt.unsafe && name == idempotencyArg:
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, nil, nil, nil, fmt.Errorf("argument %s: must be a string", name)
			}
			header.Set("Idempotency-Key", s)
		case bt.nestedBody && name == "body":
			body = v
		case bt.bodyFields[name]:
			bodyObj[name] = v
		default:
			return nil, nil, nil, nil, fmt.Errorf("unknown argument %q (see the tool's input schema)", name)
		}
	}
	if bt.route.Body != nil && body == nil {
		b, err := json.Marshal(bodyObj)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		body = b
	}
	return params, query, body, header, nil
}

// queryValues renders a JSON scalar (or a list of them) as query strings;
// numbers keep their exact text.
func queryValues(v json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, err
	}
	list, isList := x.([]any)
	if !isList {
		list = []any{x}
	}
	var out []string
	for _, e := range list {
		switch t := e.(type) {
		case nil:
		case string:
			out = append(out, t)
		case json.Number:
			out = append(out, t.String())
		case bool:
			out = append(out, fmt.Sprint(t))
		default:
			return nil, fmt.Errorf("must be a string, number or boolean")
		}
	}
	return out, nil
}
