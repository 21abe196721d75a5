package eval

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"

	"gopkg.in/yaml.v3"
)

// A replay is a scripted investigation of one scenario: what a model
// would say, step by step. The project's own tests replay a known-good
// and a known-bad investigation of every starter scenario and check that
// the scores come out as they must (testdata/evals/replays/).
type Replay struct {
	Good []ReplayStep `yaml:"good"`
	Bad  struct {
		Steps []ReplayStep `yaml:"steps"`
		// FailsWith is a piece of the failure the bad replay must get.
		FailsWith string `yaml:"fails_with"`
	} `yaml:"bad"`
}

// ReplayStep is one model turn: a tool call, a finding, or the answer.
type ReplayStep struct {
	Tool    string         `yaml:"tool"`
	Args    map[string]any `yaml:"args"`
	Finding map[string]any `yaml:"finding"`
	Text    string         `yaml:"text"`
}

// LoadReplay reads a replay file (unknown fields are errors).
func LoadReplay(path string) (*Replay, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dec := yaml.NewDecoder(f)
	dec.KnownFields(true)
	var r Replay
	if err := dec.Decode(&r); err != nil {
		return nil, yamlError(path, err)
	}
	return &r, nil
}

// callRef is "$N" in a replay: the id of the run's Nth tool call, known
// only once the provider has assigned it.
var callRef = regexp.MustCompile(`^\$(\d+)$`)

// Turn renders a step as the tool name and JSON arguments, with "$N"
// references replaced from callIDs (the run's tool call ids so far).
func (s ReplayStep) Turn(callIDs []string) (tool, args, text string, err error) {
	switch {
	case s.Tool != "":
		b, err := json.Marshal(resolveRefs(s.Args, callIDs))
		return s.Tool, string(b), "", err
	case s.Finding != nil:
		b, err := json.Marshal(resolveRefs(s.Finding, callIDs))
		return "report_finding", string(b), "", err
	case s.Text != "":
		return "", "", s.Text, nil
	}
	return "", "", "", fmt.Errorf("a replay step needs tool, finding or text")
}

func resolveRefs(v any, ids []string) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = resolveRefs(e, ids)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = resolveRefs(e, ids)
		}
		return out
	case string:
		if m := callRef.FindStringSubmatch(x); m != nil {
			n, _ := strconv.Atoi(m[1])
			if n >= 1 && n <= len(ids) {
				return ids[n-1]
			}
		}
	}
	return v
}
