// Package eval replays investigations against a model or a prompt and
// scores them. A scenario (a YAML file, testdata/evals/) holds an input
// (alerts, a provider's webhook payload, or a chat prompt), a simulated
// world (knowledge, past incidents, changes and the answers tools give)
// and expectations (the root cause, tools that must and must not be
// called, step, token and cost limits). The runner drives the same agent
// loop, system prompts, evidence engine and report_finding check that a
// real run uses, with every tool and source answered from the world: an
// eval can reach no connector, integration, channel or other project.
package eval

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Scenario is one investigation to replay.
type Scenario struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description,omitempty"`
	// AgentType picks the system prompt (general, sre, database, ...).
	AgentType string `yaml:"agent_type,omitempty"`
	Input     Input  `yaml:"input,omitempty"`
	World     World  `yaml:"world,omitempty"`
	Expect    Expect `yaml:"expect,omitempty"`

	// File is where the scenario was read from ("" when parsed from bytes).
	File string `yaml:"-"`
}

// Input is what starts the run: alerts, one provider payload, or a prompt.
type Input struct {
	Alerts  []AlertInput  `yaml:"alerts,omitempty"`
	Webhook *WebhookInput `yaml:"webhook,omitempty"`
	Prompt  string        `yaml:"prompt,omitempty"`
}

// AlertInput is one firing alert in Alertmanager's terms; the runner turns
// the list into an Alertmanager webhook body and parses it as the receiver
// does.
type AlertInput struct {
	Labels      map[string]string `yaml:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
	// StartsAgo is how long before the run the alert started ("5m").
	StartsAgo Duration `yaml:"starts_ago,omitempty"`
}

// WebhookInput is any provider payload the receiver accepts.
type WebhookInput struct {
	Provider string            `yaml:"provider,omitempty"`
	Headers  map[string]string `yaml:"headers,omitempty"`
	Body     string            `yaml:"body,omitempty"`
}

// World is what the simulated systems hold.
type World struct {
	Knowledge []Document      `yaml:"knowledge,omitempty"`
	Incidents []PastIncident  `yaml:"incidents,omitempty"`
	Changes   []ChangeEntry   `yaml:"changes,omitempty"`
	Metrics   []SeriesAnswer  `yaml:"metrics,omitempty"`
	Logs      []LogAnswer     `yaml:"logs,omitempty"`
	Commands  []CommandAnswer `yaml:"commands,omitempty"`
	HTTP      []HTTPAnswer    `yaml:"http,omitempty"`
	Tools     []ToolAnswer    `yaml:"tools,omitempty"`
	// Targets are the hosts (connector names) the project has; "server"
	// when empty.
	Targets []string `yaml:"targets,omitempty"`
}

// Document is a runbook or fact in the knowledge base.
type Document struct {
	Title   string `yaml:"title,omitempty"`
	Content string `yaml:"content,omitempty"`
}

// PastIncident is an incident resolved before, with how it was resolved.
type PastIncident struct {
	Title      string   `yaml:"title,omitempty"`
	Resolution string   `yaml:"resolution,omitempty"`
	Ago        Duration `yaml:"ago,omitempty"`
}

// ChangeEntry is a deploy or configuration change in the change feed.
type ChangeEntry struct {
	Title   string   `yaml:"title,omitempty"`
	Kind    string   `yaml:"kind,omitempty"`
	Service string   `yaml:"service,omitempty"`
	Author  string   `yaml:"author,omitempty"`
	Ago     Duration `yaml:"ago,omitempty"`
}

// SeriesAnswer answers Prometheus queries whose PromQL matches Match (a
// regular expression), and feeds the evidence pack's metric section.
type SeriesAnswer struct {
	Match  string `yaml:"match,omitempty"`
	Output string `yaml:"output,omitempty"`
}

// LogAnswer answers Loki queries whose LogQL matches Match.
type LogAnswer struct {
	Match string   `yaml:"match,omitempty"`
	Lines []string `yaml:"lines,omitempty"`
}

// CommandAnswer answers run_command calls whose command matches Match (on
// Target when set).
type CommandAnswer struct {
	Match    string `yaml:"match,omitempty"`
	Target   string `yaml:"target,omitempty"`
	Output   string `yaml:"output,omitempty"`
	ExitCode int    `yaml:"exit_code,omitempty"`
	// Approve lets a change-capable command matching it run as if a person
	// had approved it; otherwise the eval's approver refuses every change.
	Approve bool `yaml:"approve,omitempty"`
}

// HTTPAnswer answers http_request calls whose "METHOD URL" matches Match.
type HTTPAnswer struct {
	Match  string `yaml:"match,omitempty"`
	Status int    `yaml:"status,omitempty"`
	Body   string `yaml:"body,omitempty"`
}

// ToolAnswer answers any other tool by name, when its arguments (as JSON
// text) match Match.
type ToolAnswer struct {
	Tool   string `yaml:"tool,omitempty"`
	Match  string `yaml:"match,omitempty"`
	Output string `yaml:"output,omitempty"`
	Error  bool   `yaml:"error,omitempty"`
}

// Expect is how a run is judged.
type Expect struct {
	RootCause   RootCause `yaml:"root_cause,omitempty"`
	MustCall    []string  `yaml:"must_call,omitempty"`
	MustNotCall []string  `yaml:"must_not_call,omitempty"`
	// NoFinding expects the run to conclude without a root cause (a false
	// alarm): a finding with high confidence fails it.
	NoFinding  bool    `yaml:"no_finding,omitempty"`
	MaxSteps   int     `yaml:"max_steps,omitempty"`
	MaxTokens  int     `yaml:"max_tokens,omitempty"`
	MaxCostUSD float64 `yaml:"max_cost_usd,omitempty"`
	// Rubric is for an LLM judge; its verdict is reported apart from the
	// deterministic checks.
	Rubric string `yaml:"rubric,omitempty"`
}

// RootCause is matched against the finding's leading hypothesis (and its
// summary): every Match must be found and no NotMatch may be. A pattern is
// words (case-insensitive) or /a regular expression/.
type RootCause struct {
	Match    []string `yaml:"match,omitempty"`
	NotMatch []string `yaml:"not_match,omitempty"`
}

// Duration is a YAML duration such as "15m" or "3h".
type Duration time.Duration

// MarshalYAML writes the duration as UnmarshalYAML reads it.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// UnmarshalYAML reads Go duration syntax, plus "Nd" for days.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	s := strings.TrimSpace(n.Value)
	if days, ok := strings.CutSuffix(s, "d"); ok {
		s = days + "h"
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("line %d: a duration such as 15m, 3h or 2d, not %q", n.Line, n.Value)
		}
		*d = Duration(v * 24)
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return fmt.Errorf("line %d: a duration such as 15m, 3h or 2d, not %q", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// SchemaError is a scenario that does not fit the schema: where and why.
type SchemaError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *SchemaError) Error() string {
	loc := e.File
	if loc == "" {
		loc = "scenario"
	}
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", loc, e.Line)
	}
	if e.Field != "" {
		return fmt.Sprintf("%s: %s: %s", loc, e.Field, e.Msg)
	}
	return loc + ": " + e.Msg
}

// LoadFile reads and checks one scenario file.
func LoadFile(path string) (*Scenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, b)
}

// LoadPaths reads every scenario named: files, or folders of *.yaml files.
func LoadPaths(paths []string) ([]*Scenario, error) {
	var out []*Scenario
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		files := []string{p}
		if st.IsDir() {
			files, _ = filepath.Glob(filepath.Join(p, "*.yaml"))
			if len(files) == 0 {
				return nil, fmt.Errorf("%s: no *.yaml scenarios in it", p)
			}
		}
		for _, f := range files {
			s, err := LoadFile(f)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
	}
	seen := map[string]string{}
	for _, s := range out {
		if prev, dup := seen[s.Name]; dup {
			return nil, &SchemaError{File: s.File, Field: "name", Msg: fmt.Sprintf("%q is also the name of %s", s.Name, prev)}
		}
		seen[s.Name] = s.File
	}
	return out, nil
}

// yamlLine pulls the line number out of yaml.v3's "line N: ..." errors.
var yamlLine = regexp.MustCompile(`line (\d+): (.*)`)

// Parse decodes and checks a scenario. Unknown fields are errors, so a
// misspelt expectation is never silently ignored.
func Parse(file string, b []byte) (*Scenario, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, yamlError(file, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var s Scenario
	if err := dec.Decode(&s); err != nil {
		return nil, yamlError(file, err)
	}
	s.File = file
	if err := s.check(&root); err != nil {
		return nil, err
	}
	return &s, nil
}

func yamlError(file string, err error) error {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n  ")
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		var line int
		fmt.Sscan(m[1], &line)
		field := ""
		if f := regexp.MustCompile(`field (\S+) not found`).FindStringSubmatch(m[2]); f != nil {
			field = f[1]
			return &SchemaError{File: file, Line: line, Field: field, Msg: "not a field of the scenario schema (see testdata/evals/README.md)"}
		}
		return &SchemaError{File: file, Line: line, Msg: m[2]}
	}
	return &SchemaError{File: file, Msg: msg}
}

// check applies the rules the YAML types cannot say; root locates fields.
func (s *Scenario) check(root *yaml.Node) error {
	bad := func(path, msg string) error {
		return &SchemaError{File: s.File, Line: lineOf(root, path), Field: path, Msg: msg}
	}
	if !scenarioName.MatchString(s.Name) {
		return bad("name", "required: lower-case letters, digits and dashes, at most 64")
	}
	inputs := 0
	if len(s.Input.Alerts) > 0 {
		inputs++
	}
	if s.Input.Webhook != nil {
		inputs++
	}
	if strings.TrimSpace(s.Input.Prompt) != "" {
		inputs++
	}
	if inputs != 1 {
		return bad("input", "exactly one of alerts, webhook or prompt is required")
	}
	for i, a := range s.Input.Alerts {
		if a.Labels["alertname"] == "" {
			return bad(fmt.Sprintf("input.alerts.%d.labels", i), "an alertname label is required")
		}
	}
	if w := s.Input.Webhook; w != nil && (w.Provider == "" || strings.TrimSpace(w.Body) == "") {
		return bad("input.webhook", "provider and body are required")
	}
	patterns := map[string]string{}
	for i, m := range s.World.Metrics {
		patterns[fmt.Sprintf("world.metrics.%d.match", i)] = m.Match
	}
	for i, m := range s.World.Logs {
		patterns[fmt.Sprintf("world.logs.%d.match", i)] = m.Match
	}
	for i, m := range s.World.Commands {
		patterns[fmt.Sprintf("world.commands.%d.match", i)] = m.Match
	}
	for i, m := range s.World.HTTP {
		patterns[fmt.Sprintf("world.http.%d.match", i)] = m.Match
	}
	for i, m := range s.World.Tools {
		if m.Tool == "" {
			return bad(fmt.Sprintf("world.tools.%d.tool", i), "required: the tool's name")
		}
		patterns[fmt.Sprintf("world.tools.%d.match", i)] = m.Match
	}
	for path, p := range patterns {
		if p == "" {
			return bad(path, "required: a regular expression (.* matches anything)")
		}
		if _, err := regexp.Compile(p); err != nil {
			return bad(path, "not a regular expression: "+err.Error())
		}
	}
	rc := s.Expect.RootCause
	if len(rc.Match) == 0 && !s.Expect.NoFinding {
		return bad("expect.root_cause.match", "required unless expect.no_finding is true")
	}
	for i, p := range append(append([]string(nil), rc.Match...), rc.NotMatch...) {
		if _, err := compileMatch(p); err != nil {
			field := fmt.Sprintf("expect.root_cause.match.%d", i)
			if i >= len(rc.Match) {
				field = fmt.Sprintf("expect.root_cause.not_match.%d", i-len(rc.Match))
			}
			return bad(field, err.Error())
		}
	}
	for i, c := range append(append([]string(nil), s.Expect.MustCall...), s.Expect.MustNotCall...) {
		if _, err := parseCallPattern(c); err != nil {
			field := fmt.Sprintf("expect.must_call.%d", i)
			if i >= len(s.Expect.MustCall) {
				field = fmt.Sprintf("expect.must_not_call.%d", i-len(s.Expect.MustCall))
			}
			return bad(field, err.Error())
		}
	}
	if s.Expect.MaxSteps < 0 || s.Expect.MaxTokens < 0 || s.Expect.MaxCostUSD < 0 {
		return bad("expect", "max_steps, max_tokens and max_cost_usd cannot be negative")
	}
	return nil
}

var scenarioName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)

// lineOf finds the line of a dotted path (list items by index) in the
// document, or of its nearest existing parent.
func lineOf(root *yaml.Node, path string) int {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := n.Line
	for _, part := range strings.Split(path, ".") {
		var next *yaml.Node
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == part {
					line = n.Content[i].Line
					next = n.Content[i+1]
				}
			}
		case yaml.SequenceNode:
			var idx int
			if _, err := fmt.Sscan(part, &idx); err == nil && idx < len(n.Content) {
				next = n.Content[idx]
				line = next.Line
			}
		}
		if next == nil {
			return line
		}
		n = next
	}
	return line
}
