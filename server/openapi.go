package server

import (
	"encoding/json"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
)

// openAPI builds the OpenAPI 3.1 document from the route table: the same
// values that register handlers describe them, so the two cannot drift.
func (s *Server) openAPI() map[string]any {
	g := &schemaGen{defs: map[string]any{}}
	paths := map[string]map[string]any{}
	for _, rt := range s.routes {
		op := map[string]any{
			"summary":     rt.Summary,
			"operationId": operationID(rt),
			"tags":        routeTags(rt),
		}
		var params []any
		for _, seg := range strings.Split(rt.Path, "/") {
			if isParam(seg) {
				name := seg[1 : len(seg)-1]
				schema := map[string]any{"type": "string"}
				if strings.HasSuffix(name, "_id") {
					schema["format"] = "uuid"
				}
				params = append(params, map[string]any{"name": name, "in": "path", "required": true, "schema": schema})
			}
		}
		if rt.Project {
			params = append(params, map[string]any{"name": "X-Project-ID", "in": "header", "required": true,
				"schema": map[string]any{"type": "string", "format": "uuid"}})
		}
		if rt.Query != nil {
			params = append(params, g.queryParams(reflect.TypeOf(rt.Query))...)
			if sets := requiredOneOf(reflect.TypeOf(rt.Query)); len(sets) > 0 {
				// The parameters say it one by one; the operation says the
				// whole rule, since OpenAPI has no "one of these" for them.
				op["x-required-one-of"] = sets
				var says []string
				for _, set := range sets {
					says = append(says, "Give at least one of "+strings.Join(set, " or ")+" (both may be given); without any of them the answer is 422.")
				}
				op["description"] = strings.Join(says, " ")
			}
		}
		if len(params) > 0 {
			op["parameters"] = params
		}
		if rt.Body != nil {
			ct := "application/json"
			if rt.Multipart {
				ct = "multipart/form-data"
			}
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{ct: map[string]any{"schema": g.schema(reflect.TypeOf(rt.Body))}}}
		}
		responses := map[string]any{}
		ok := map[string]any{"description": "Successful response"}
		if rt.Resp != nil {
			ok["content"] = map[string]any{"application/json": map[string]any{"schema": g.schema(reflect.TypeOf(rt.Resp))}}
		}
		responses[strconv.Itoa(rt.Status)] = ok
		for code, typ := range rt.ErrorResp {
			responses[strconv.Itoa(code)] = map[string]any{"description": http.StatusText(code),
				"content": map[string]any{"application/json": map[string]any{"schema": g.schema(reflect.TypeOf(typ))}}}
		}
		if rt.Body != nil || rt.Query != nil || len(params) > 0 {
			responses["422"] = map[string]any{"description": "Validation Error", "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/HTTPValidationError"}}}}
		}
		if rt.Auth != AuthNone {
			responses["401"] = errResp("Not authenticated")
			op["security"] = []any{map[string]any{"bearer": []any{}}, map[string]any{"cookie": []any{}}}
		} else {
			op["security"] = []any{}
		}
		if rt.Perm != "" || rt.Auth == AuthHuman {
			responses["403"] = errResp("Forbidden")
		}
		if rt.Body != nil || rt.RawBody || rt.Multipart {
			limit := rt.MaxBody
			if limit == 0 {
				limit = s.cfg.MaxBodyBytes
			}
			op["x-max-body-bytes"] = limit
			responses["413"] = errResp("Request body larger than x-max-body-bytes")
		}
		billingResponses(rt, responses, func(v any) any { return g.schema(reflect.TypeOf(v)) })
		op["responses"] = responses
		op["x-auth"] = [...]string{"none", "any", "human"}[rt.Auth]
		if rt.Perm != "" {
			op["x-permission"] = string(rt.Perm)
		}
		if rt.Project {
			op["x-project-scoped"] = true
		}
		if rt.RecentAuth {
			op["x-recent-auth"] = true
			responses["403"] = errResp("Forbidden (code reauthentication_required: POST /api/auth/reauthenticate first)")
		}
		p := toOpenAPIPath(rt.Path)
		if paths[p] == nil {
			paths[p] = map[string]any{}
		}
		paths[p][strings.ToLower(rt.Method)] = op
	}
	g.defs["HTTPValidationError"] = map[string]any{"type": "object", "properties": map[string]any{
		"detail": map[string]any{"type": "array", "items": map[string]any{"$ref": "#/components/schemas/ValidationError"}}}}
	g.defs["ValidationError"] = map[string]any{"type": "object", "required": []string{"loc", "msg", "type"}, "properties": map[string]any{
		"loc":  map[string]any{"type": "array", "items": map[string]any{"anyOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}}},
		"msg":  map[string]any{"type": "string"},
		"type": map[string]any{"type": "string"}}}
	g.defs["ErrorOut"] = map[string]any{"type": "object", "required": []string{"detail"}, "properties": map[string]any{
		"detail": map[string]any{"type": "string"}, "code": map[string]any{"type": "string"}}}
	roles := map[string]any{}
	for _, r := range Roles {
		var ps []string
		for _, p := range AllPerms() {
			if RoleHas(r, p) {
				ps = append(ps, string(p))
			}
		}
		roles[r] = ps
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{"title": "opsagent API", "version": "0.1.0",
			"description": "Self-hosted AI agent platform for DevOps and SRE teams. Every route lists x-auth (none, any, human) and, where it needs one, x-permission; x-roles gives the permission matrix."},
		"paths": paths,
		"components": map[string]any{
			"schemas": g.defs,
			"securitySchemes": map[string]any{
				"bearer": map[string]any{"type": "http", "scheme": "bearer", "description": "Access token (JWT) or API key (opsk_...)"},
				"cookie": map[string]any{"type": "apiKey", "in": "cookie", "name": accessCookie},
			},
		},
		"x-roles": roles,
	}
}

func errResp(desc string) map[string]any {
	return map[string]any{"description": desc, "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/ErrorOut"}}}}
}

func routeTags(rt *Route) []string {
	tags := append([]string{}, rt.Tags...)
	if rt.MCP {
		tags = append(tags, "mcp-exposed")
	}
	return tags
}

func toOpenAPIPath(p string) string { return p }

func operationID(rt *Route) string {
	r := strings.NewReplacer("/", "_", "{", "", "}", "", "-", "_", ".", "_")
	return strings.ToLower(rt.Method) + r.Replace(strings.TrimPrefix(rt.Path, "/api"))
}

type schemaGen struct{ defs map[string]any }

var (
	timeType = reflect.TypeOf(time.Time{})
	rawType  = reflect.TypeOf(json.RawMessage{})
)

func (g *schemaGen) schema(t reflect.Type) map[string]any {
	if t == timeType {
		return map[string]any{"type": "string", "format": "date-time"}
	}
	if t == rawType {
		return map[string]any{}
	}
	switch t.Kind() {
	case reflect.Pointer:
		inner := g.schema(t.Elem())
		return map[string]any{"anyOf": []any{inner, map[string]any{"type": "null"}}}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int64, reflect.Int32:
		return map[string]any{"type": "integer"}
	case reflect.Float64, reflect.Float32:
		return map[string]any{"type": "number"}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string", "format": "binary"}
		}
		return map[string]any{"type": "array", "items": g.schema(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": g.schema(t.Elem())}
	case reflect.Interface:
		return map[string]any{}
	case reflect.Struct:
		name := t.Name()
		if name == "" {
			return g.structSchema(t)
		}
		if n, ok := reflect.Zero(t).Interface().(interface{ schemaName() string }); ok {
			name = n.schemaName() // the spec fixes a few record names Go cannot spell
		}
		if _, ok := g.defs[name]; !ok {
			g.defs[name] = map[string]any{} // placeholder breaks recursion
			g.defs[name] = g.structSchema(t)
		}
		return map[string]any{"$ref": "#/components/schemas/" + name}
	}
	return map[string]any{}
}

func (g *schemaGen) structSchema(t reflect.Type) map[string]any {
	props := map[string]any{}
	var required []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			sub := g.structSchema(f.Type)
			for k, v := range sub["properties"].(map[string]any) {
				props[k] = v
			}
			continue
		}
		name := jsonName(f)
		if name == "" {
			continue
		}
		sch := g.schema(f.Type)
		r := parseRule(f.Tag.Get("validate"))
		applyRule(sch, r)
		if d := f.Tag.Get("doc"); d != "" {
			sch["description"] = d
		}
		if f.Tag.Get("format") == "binary" {
			sch = map[string]any{"type": "string", "format": "binary"}
		}
		props[name] = sch
		if r.required {
			required = append(required, name)
		}
	}
	out := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		sort.Strings(required)
		out["required"] = required
	}
	return out
}

func applyRule(sch map[string]any, r *rule) {
	target := sch
	if alts, ok := sch["anyOf"].([]any); ok && len(alts) > 0 {
		if m, ok := alts[0].(map[string]any); ok {
			target = m
		}
	}
	switch target["type"] {
	case "string":
		if r.min != nil {
			target["minLength"] = *r.min
		}
		if r.max != nil {
			target["maxLength"] = *r.max
		}
		if r.email {
			target["format"] = "email"
		}
		if r.pattern != nil {
			target["pattern"] = r.patternSrc
		}
		if r.oneof != nil {
			target["enum"] = r.oneof
		}
	case "array":
		if r.min != nil {
			target["minItems"] = *r.min
		}
		if r.max != nil {
			target["maxItems"] = *r.max
		}
	case "integer", "number":
		bounded := target
		if r.omitzero && (r.gte != nil || r.lte != nil) {
			// 0 means "not given"; the bounds hold for every other value.
			bounded = map[string]any{}
			target["oneOf"] = []any{map[string]any{"const": 0}, bounded}
		}
		if r.gte != nil {
			bounded["minimum"] = *r.gte
		}
		if r.lte != nil {
			bounded["maximum"] = *r.lte
		}
	}
}

// requiredOneOf lists the query parameters of t that must not all be
// missing: each required_without=other rule makes a pair.
func requiredOneOf(t reflect.Type) [][]string {
	var out [][]string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if r := parseRule(f.Tag.Get("validate")); f.Tag.Get("query") != "" && r.requiredWithout != "" {
			out = append(out, []string{f.Tag.Get("query"), r.requiredWithout})
		}
	}
	return out
}

func (g *schemaGen) queryParams(t reflect.Type) []any {
	var out []any
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name := f.Tag.Get("query")
		if name == "" {
			continue
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		sch := g.schema(ft)
		r := parseRule(f.Tag.Get("validate"))
		applyRule(sch, r)
		if d, ok := f.Tag.Lookup("default"); ok {
			sch["default"] = d
			switch sch["type"] {
			case "integer":
				if n, err := strconv.Atoi(d); err == nil {
					sch["default"] = n
				}
			case "boolean":
				sch["default"] = d == "true"
			}
		}
		p := map[string]any{"name": name, "in": "query", "required": r.required, "schema": sch}
		desc := f.Tag.Get("doc")
		if r.requiredWithout != "" {
			// OpenAPI cannot say "one of these two"; the description and
			// the extension say it, and the validator enforces the same rule.
			p["x-required-without"] = r.requiredWithout
			desc = strings.TrimSpace(desc + " Required unless " + r.requiredWithout + " is given.")
		}
		if desc != "" {
			p["description"] = desc
		}
		out = append(out, p)
	}
	return out
}
