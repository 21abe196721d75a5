package server

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/opsagent/opsagent/server/tools"
	"github.com/opsagent/opsagent/server/tools/shellscan"
	"github.com/opsagent/opsagent/store"
)

// compiledRule is a rule ready to match calls.
type compiledRule struct {
	store.Rule
	re  *regexp.Regexp     // nil: no text pattern
	cmd *shellscan.Pattern // match_type command
}

// effectCategory is the shape of an effect category name.
var effectCategory = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// compileRule checks a rule's shape (kind, effect, tool, pattern) and
// compiles its pattern. Errors are 422s at the field they name.
func compileRule(r *store.Rule) (*compiledRule, error) {
	switch r.Kind {
	case store.RuleMustNever:
		if r.Effect != store.EffectBlock && r.Effect != store.EffectObligation {
			return nil, invalid("a must_never rule blocks (effect block) or is only told to the model (effect obligation)", "value_error", "body", "effect")
		}
	case store.RuleMustAlways:
		if r.Effect != store.EffectRequireApproval && r.Effect != store.EffectObligation && r.Effect != store.EffectAllow {
			return nil, invalid("a must_always rule has effect require_approval, obligation or allow", "value_error", "body", "effect")
		}
	default:
		return nil, invalid("kind must be must_always or must_never", "value_error", "body", "kind")
	}
	matches := r.Tool != "" || r.MatchType != store.MatchNone
	if r.Effect != store.EffectObligation && !matches {
		return nil, invalid("effect "+r.Effect+" needs a match: a tool, a pattern or both", "value_error", "body", "tool")
	}
	if r.Effect == store.EffectAllow && (r.Tool == "" || r.MatchType == store.MatchNone) {
		return nil, invalid("an allow rule names a tool and a pattern: it never pre-approves whole tools", "value_error", "body", "pattern")
	}
	if r.AllowOpaque && r.Kind != store.RuleMustNever {
		return nil, invalid("allow_opaque relaxes a must_never rule; it means nothing on a must_always rule", "value_error", "body", "allow_opaque")
	}
	c := &compiledRule{Rule: *r}
	switch r.MatchType {
	case store.MatchCommand, store.MatchEffect:
		if r.Tool != "" && r.Tool != "*" && r.Tool != runCommandName {
			return nil, invalid("match_type "+r.MatchType+" looks at parsed shell commands: the tool is run_command (or empty)", "value_error", "body", "tool")
		}
		if r.Effect == store.EffectAllow {
			return nil, invalid("an allow rule matches the exact command (glob or regex); to let read-only commands run, use the project's command policy", "value_error", "body", "match_type")
		}
		if r.MatchType == store.MatchEffect {
			if !effectCategory.MatchString(r.Pattern) {
				return nil, invalid("an effect rule's pattern is a category name such as deletes_files, stops_host or runs_downloaded_code", "value_error", "body", "pattern")
			}
			return c, nil
		}
		p, err := shellscan.ParsePattern(r.Pattern)
		if err != nil {
			return nil, invalid("command pattern: "+err.Error(), "value_error", "body", "pattern")
		}
		c.cmd = p
		return c, nil
	case store.MatchNone:
		if r.Pattern != "" {
			return nil, invalid("a pattern needs match_type glob or regex", "value_error", "body", "match_type")
		}
	case store.MatchGlob, store.MatchRegex:
		if r.Pattern == "" {
			return nil, invalid("match_type "+r.MatchType+" needs a pattern", "value_error", "body", "pattern")
		}
		expr := r.Pattern
		if r.MatchType == store.MatchGlob {
			expr = globToRegexp(r.Pattern)
		}
		re, err := regexp.Compile("(?s)" + expr)
		if err != nil {
			return nil, invalid("pattern does not compile: "+err.Error(), "value_error", "body", "pattern")
		}
		c.re = re
	default:
		return nil, invalid("match_type must be glob, regex, command or effect", "value_error", "body", "match_type")
	}
	return c, nil
}

// globToRegexp turns a glob over a whole command into an anchored regular
// expression: * is any run of characters (spaces and slashes included), ?
// is one character, everything else is literal.
func globToRegexp(g string) string {
	var b strings.Builder
	b.WriteString("^")
	for _, r := range g {
		switch r {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	return b.String()
}

// globEscape makes a glob that matches exactly s ("approve and remember").
func globEscape(s string) string {
	return strings.NewReplacer("*", "[*]", "?", "[?]").Replace(s)
}

// callView is one call as rules see it.
type callView struct {
	Tool     string
	Rendered tools.Rendered
	// Texts are every string in the arguments, so a rule catches a command
	// that a wrapping tool carries in some other field.
	Texts []string
	// Scan is what a run_command line runs (nil for other tools).
	Scan *commandScan
}

func viewCall(t any, name string, args json.RawMessage) (callView, error) {
	v := callView{Tool: name}
	if r, ok := t.(tools.Renderer); ok {
		rendered, err := r.Render(args)
		if err != nil {
			return v, err
		}
		v.Rendered = rendered
	} else {
		v.Rendered = tools.Rendered{Command: string(args)}
	}
	var parsed any
	if err := json.Unmarshal(args, &parsed); err == nil {
		collectStrings(parsed, &v.Texts)
	}
	return v, nil
}

func collectStrings(v any, out *[]string) {
	switch x := v.(type) {
	case string:
		*out = append(*out, x)
	case []any:
		for _, e := range x {
			collectStrings(e, out)
		}
	case map[string]any:
		for _, e := range x {
			collectStrings(e, out)
		}
	}
}

// shellControl are the characters that chain, substitute or redirect in a
// shell command line: an allow rule never covers a command using them, so
// "kubectl get *" does not pre-approve "kubectl get pods; rm -rf /".
const shellControl = ";&|`$()<>\n\r\\"

// matches reports whether the rule applies to the call. Restrictive rules
// (block, require_approval, obligation) look at the rendered command, its
// whitespace-collapsed form and every string argument; an allow rule looks
// only at the rendered command, exactly.
func (c *compiledRule) matches(v callView) bool {
	if c.Tool != "" && c.Tool != "*" && c.Tool != v.Tool {
		return false
	}
	switch c.MatchType {
	case store.MatchCommand:
		return v.Scan != nil && v.Scan.matchesCommand(c.cmd)
	case store.MatchEffect:
		return v.Scan != nil && shellscan.Has(v.Scan.effects, c.Pattern)
	}
	if c.re == nil {
		return true
	}
	if c.Effect == store.EffectAllow {
		if v.Tool == "run_command" && strings.ContainsAny(v.Rendered.Command, shellControl) {
			return false
		}
		if v.Scan != nil && v.Scan.a.IsOpaque() {
			return false
		}
		return c.re.MatchString(v.Rendered.Command)
	}
	cmd := v.Rendered.Command
	texts := append([]string{cmd, strings.Join(strings.Fields(cmd), " ")}, v.Texts...)
	if v.Scan != nil {
		texts = append(texts, v.Scan.texts...)
	}
	for _, s := range texts {
		if c.re.MatchString(s) {
			return true
		}
	}
	return false
}

// ruleLabel names a rule for the model and for people.
func ruleLabel(r *store.Rule) string {
	scope := "project"
	if r.ProjectID == "" {
		scope = "org"
	}
	return fmt.Sprintf("%s rule %s (%s): %s", r.Kind, r.ID, scope, r.Description)
}
