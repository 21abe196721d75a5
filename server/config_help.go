package server

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"time"
)

// flagGroup is one heading of `opsagent serve --help`.
type flagGroup struct {
	name, summary string
	flags         []string
}

// serveFlagGroups orders serve's flags for a person reading --help; a flag
// missing here is listed under "other", so none is ever hidden.
var serveFlagGroups = []flagGroup{
	{"network", "where it listens and how it is reached", []string{"addr", "base-url", "trust-proxy", "max-body-bytes",
		"webhook-max-body-bytes", "shutdown-timeout", "metrics-token", "disable-http-metrics", "pprof-addr"}},
	{"data", "where state is kept and for how long", []string{"data-dir", "disk-min-free", "retention-transcripts-days",
		"retention-sessions-days", "retention-audit-days", "retention-outbox-days"}},
	{"security", "sign-up, mail, secrets and logs", []string{"signup", "disable-password-reset", "vault-passphrase", "smtp-url",
		"mail-from", "log-level", "log-format"}},
	{"agent", "the model, its prices and what the agent may run", []string{"llm-provider", "llm-base-url", "llm-api-key", "llm-model",
		"llm-prices", "agent-turns-per-minute", "allow-local-commands", "connector-heartbeat", "run-resume-limit"}},
	{"channels", "Slack, Telegram and WhatsApp", []string{"slack-api-url", "telegram-api-url", "whatsapp-api-url", "channel-update-interval"}},
	{"billing", "plans, quotas, statements and Stripe", []string{"billing", "billing-plans", "billing-default-plan", "billing-grace",
		"stripe-api-key", "stripe-webhook-secret", "stripe-api-base"}},
	{"cluster", "several servers on one PostgreSQL database", []string{"database-url"}},
}

// PrintServeHelp writes serve's flags grouped under serveFlagGroups, each
// group in the standard library's layout (name, type, usage, default).
func PrintServeHelp(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, "Usage: opsagent serve [flags]   (every flag has an OPSAGENT_ variable; a flag wins over it)\n")
	seen := map[string]bool{}
	section := func(title string, names []string) {
		g := flag.NewFlagSet(title, flag.ContinueOnError)
		for _, n := range names {
			if f := fs.Lookup(n); f != nil && !seen[n] {
				seen[n] = true
				g.Var(f.Value, f.Name, f.Usage)
				g.Lookup(n).DefValue = f.DefValue
			}
		}
		if !hasFlags(g) {
			return
		}
		fmt.Fprintf(w, "\n%s\n", title)
		g.SetOutput(w)
		g.PrintDefaults()
	}
	for _, gr := range serveFlagGroups {
		section(gr.name+": "+gr.summary, gr.flags)
	}
	var rest []string
	fs.VisitAll(func(f *flag.Flag) {
		if !seen[f.Name] {
			rest = append(rest, f.Name)
		}
	})
	section("other: actions and the rest", rest)
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

var flagValueErr = regexp.MustCompile(`^invalid value "(.*)" for flag -(\S+): (.*)$`)

// FlagError turns the flag package's error into one line that says what is
// wrong and how to write it (a duration needs a unit: "parse error" did not
// say so). Other errors pass through.
func FlagError(fs *flag.FlagSet, err error) error {
	m := flagValueErr.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	return valueError("--"+m[2], m[1], fs.Lookup(m[2]), errors.New(m[3]))
}

// valueError explains a value that does not parse for flag f; name is how
// it was given (--flag or OPSAGENT_VARIABLE).
func valueError(name, value string, f *flag.Flag, err error) error {
	if f != nil {
		if g, ok := f.Value.(flag.Getter); ok {
			switch g.Get().(type) {
			case time.Duration:
				return fmt.Errorf("%s: %q is not a duration: write a number with its unit, e.g. 10s, 500ms, 2m or 1h30m", name, value)
			case bool:
				return fmt.Errorf("%s: %q is not true or false", name, value)
			case int, int64, uint, uint64:
				return fmt.Errorf("%s: %q is not a whole number", name, value)
			}
		}
	}
	return fmt.Errorf("%s: invalid value %q: %v", name, value, err)
}
