package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"strings"
	"testing"
)

// A value that does not parse is one line naming the flag (or variable) and
// how to write it, not the whole flag listing with "parse error".
func TestServeFlagMistakesAreOneLineThatSaysWhatIsWrong(t *testing.T) {
	for _, c := range []struct {
		args []string
		vars map[string]string
		want string
	}{
		{[]string{"serve", "--shutdown-timeout", "10"}, nil, `--shutdown-timeout: "10" is not a duration: write a number with its unit, e.g. 10s`},
		{[]string{"serve"}, map[string]string{"OPSAGENT_SHUTDOWN_TIMEOUT": "10"}, `OPSAGENT_SHUTDOWN_TIMEOUT: "10" is not a duration`},
		{[]string{"serve", "--max-body-bytes", "lots"}, nil, `--max-body-bytes: "lots" is not a whole number`},
	} {
		var out, errb bytes.Buffer
		err := run(context.Background(), c.args, env(c.vars), &out, &errb)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v %v: got %v, want one line with %q", c.args, c.vars, err, c.want)
		}
		if errb.Len() != 0 {
			t.Errorf("%v: printed besides the error:\n%s", c.args, errb.String())
		}
	}
}

// serve --help is grouped under headings with a summary each, as the
// command overview is.
func TestServeHelpIsGrouped(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"serve", "--help"}, env(nil), &out, &errb); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("serve --help: %v", err)
	}
	help := errb.String()
	at := -1
	for _, g := range []struct{ heading, flag string }{{"network: ", "-addr "}, {"data: ", "-data-dir "}, {"security: ", "-signup "},
		{"agent: ", "-llm-provider "}, {"channels: ", "-slack-api-url "}, {"billing: ", "-billing "}, {"cluster: ", "-database-url "}} {
		i := strings.Index(help, "\n"+g.heading)
		j := strings.Index(help, "\n  "+g.flag)
		if i <= at || j < i {
			t.Fatalf("--help lacks the %q group (with %s) in its place:\n%s", g.heading, g.flag, help)
		}
		at = i
	}
}
