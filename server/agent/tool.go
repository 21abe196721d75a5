package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/opsagent/opsagent/server/agent/llm"
)

// Tool is something the model may call. Run receives arguments already
// checked against Spec().Parameters; its output goes back to the model
// fenced as untrusted data, and an error goes back as an error result.
type Tool interface {
	Spec() llm.ToolSpec
	// ReadOnly reports that the tool changes nothing, so a Gate may let it
	// through without asking anyone.
	ReadOnly() bool
	Run(ctx context.Context, args json.RawMessage) (string, error)
}

// FuncTool makes a Tool of a function, for small tools that need no type.
type FuncTool struct {
	Definition llm.ToolSpec
	IsReadOnly bool
	Fn         func(ctx context.Context, args json.RawMessage) (string, error)
}

func (f FuncTool) Spec() llm.ToolSpec { return f.Definition }
func (f FuncTool) ReadOnly() bool     { return f.IsReadOnly }
func (f FuncTool) Run(ctx context.Context, args json.RawMessage) (string, error) {
	return f.Fn(ctx, args)
}

// ToolSet is an immutable set of tools with their argument schemas
// compiled once; share one across runs.
type ToolSet struct {
	byName map[string]toolEntry
	specs  []llm.ToolSpec
}

type toolEntry struct {
	tool   Tool
	schema *jsonschema.Resolved // nil: any JSON object
}

// toolName is what both providers accept as a function name.
var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// NewToolSet checks names (unique, provider-safe) and compiles each tool's
// parameter schema, so a bad tool definition fails at start-up, not mid-run.
func NewToolSet(tools ...Tool) (*ToolSet, error) {
	s := &ToolSet{byName: make(map[string]toolEntry, len(tools))}
	for _, t := range tools {
		spec := t.Spec()
		if !toolName.MatchString(spec.Name) {
			return nil, fmt.Errorf("agent: tool name %q must match %s", spec.Name, toolName)
		}
		if _, dup := s.byName[spec.Name]; dup {
			return nil, fmt.Errorf("agent: tool %q defined twice", spec.Name)
		}
		entry := toolEntry{tool: t}
		if len(spec.Parameters) > 0 {
			var sch jsonschema.Schema
			if err := json.Unmarshal(spec.Parameters, &sch); err != nil {
				return nil, fmt.Errorf("agent: tool %q: parameters are not a JSON Schema: %w", spec.Name, err)
			}
			resolved, err := sch.Resolve(nil)
			if err != nil {
				return nil, fmt.Errorf("agent: tool %q: %w", spec.Name, err)
			}
			entry.schema = resolved
		}
		s.byName[spec.Name] = entry
		s.specs = append(s.specs, spec)
	}
	return s, nil
}

// Specs returns the tool descriptions offered to the model, in the order given.
func (s *ToolSet) Specs() []llm.ToolSpec {
	if s == nil {
		return nil
	}
	return s.specs
}

// Lookup finds a tool by name.
func (s *ToolSet) Lookup(name string) (Tool, bool) {
	if s == nil {
		return nil, false
	}
	e, ok := s.byName[name]
	return e.tool, ok
}

// Names lists the tool names, sorted, for messages to the model.
func (s *ToolSet) Names() []string {
	if s == nil {
		return nil
	}
	names := make([]string, 0, len(s.byName))
	for n := range s.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// validate checks a call's arguments. The error text is written for the
// model: it says what was wrong so the model can correct the call.
func (s *ToolSet) validate(name string, args json.RawMessage) (Tool, error) {
	var e toolEntry
	ok := false
	if s != nil {
		e, ok = s.byName[name]
	}
	if !ok {
		return nil, fmt.Errorf("unknown tool %q; available tools: %v", name, s.Names())
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return nil, fmt.Errorf("arguments for %s are not valid JSON (%v); send one JSON object; %s", name, err, fieldList(e.tool.Spec().Parameters))
	}
	if _, isObject := v.(map[string]any); !isObject {
		return nil, fmt.Errorf("arguments for %s must be a JSON object", name)
	}
	if e.schema != nil {
		if err := e.schema.Validate(v); err != nil {
			return nil, fmt.Errorf("arguments for %s do not match its schema: %v; %s", name, err, fieldList(e.tool.Spec().Parameters))
		}
	}
	return e.tool, nil
}

// fieldList names a tool's argument fields, their types and which are
// required, for error messages that tell a model how to fix its call.
func fieldList(params json.RawMessage) string {
	var sch struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(params, &sch) != nil || len(sch.Properties) == 0 {
		return "it takes no arguments: send {}"
	}
	req := map[string]bool{}
	for _, n := range sch.Required {
		req[n] = true
	}
	names := make([]string, 0, len(sch.Properties))
	for n := range sch.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		p := fmt.Sprintf("%s (%v", n, sch.Properties[n].Type)
		if req[n] {
			p += ", required"
		}
		parts = append(parts, p+")")
	}
	return "valid fields: " + strings.Join(parts, ", ")
}
