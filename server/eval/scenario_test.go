package eval_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server/eval"
)

// A scenario that does not fit the schema names its file, line and field.
func TestScenarioSchemaErrorsNameFileLineAndField(t *testing.T) {
	cases := []struct {
		name, body, want string
		line             int
	}{
		{"unknown field", "name: x\ninput:\n  prompt: hi\nexpect:\n  root_cause:\n    match: [disk]\n  must_cal: [run_command]\n", "must_cal", 7},
		{"no input", "name: x\nexpect:\n  root_cause:\n    match: [disk]\n", "input", 1},
		{"two inputs", "name: x\ninput:\n  prompt: hi\n  alerts:\n    - labels: {alertname: A}\nexpect:\n  no_finding: true\n", "input", 2},
		{"bad regex", "name: x\ninput:\n  prompt: hi\nworld:\n  commands:\n    - {match: '(', output: x}\nexpect:\n  no_finding: true\n", "world.commands.0.match", 6},
		{"no root cause", "name: x\ninput:\n  prompt: hi\nexpect:\n  max_steps: 3\n", "expect.root_cause.match", 4},
		{"bad call pattern", "name: x\ninput:\n  prompt: hi\nexpect:\n  no_finding: true\n  must_not_call: ['run command']\n", "expect.must_not_call.0", 6},
		{"bad duration", "name: x\ninput:\n  alerts:\n    - labels: {alertname: A}\n      starts_ago: soon\nexpect:\n  no_finding: true\n", "duration", 5},
		{"bad name", "name: Not Valid\ninput:\n  prompt: hi\nexpect:\n  no_finding: true\n", "name", 1},
	}
	for _, c := range cases {
		_, err := eval.Parse("testdata/x.yaml", []byte(c.body))
		var se *eval.SchemaError
		if !errors.As(err, &se) {
			t.Errorf("%s: got %v, want a SchemaError", c.name, err)
			continue
		}
		if se.File != "testdata/x.yaml" || se.Line != c.line || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %q (line %d), want line %d naming %q", c.name, err, se.Line, c.line, c.want)
		}
	}
}
