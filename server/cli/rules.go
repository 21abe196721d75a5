package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// What-if for the agent's rules: preview a change against the calls the
// agent made, decide one call, and shadow rules on trial (they record what
// they would have done and decide nothing). server/rules_preview.go and
// rules_shadow.go have the shapes.

// ruleDraft is a rule as POST /api/rules (and the what-if routes) take it.
type ruleDraft struct {
	Kind        string `json:"kind"`
	Description string `json:"description"`
	Effect      string `json:"effect,omitempty"`
	Tool        string `json:"tool,omitempty"`
	MatchType   string `json:"match_type,omitempty"`
	Pattern     string `json:"pattern,omitempty"`
	AllowOpaque bool   `json:"allow_opaque,omitempty"`
}

func (r *ruleDraft) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&r.Kind, "kind", "", "must_never or must_always")
	f.StringVar(&r.Description, "description", "", "what the rule says (what the model is told)")
	f.StringVar(&r.Effect, "effect", "", "block, require_approval or allow (default: block for must_never, require_approval for must_always)")
	f.StringVar(&r.Tool, "tool", "", "the tool it applies to, e.g. run_command (default every tool)")
	f.StringVar(&r.MatchType, "match", "", "how --pattern matches: glob, regex, command or effect")
	f.StringVar(&r.Pattern, "pattern", "", `what it matches, e.g. "rm *" with --match command`)
	f.BoolVar(&r.AllowOpaque, "allow-opaque", false, "must_never only: let through run_command lines the analysis cannot prove")
}

// given says whether any of the rule's flags was set.
func (r *ruleDraft) given(cmd *cobra.Command) bool {
	for _, n := range []string{"kind", "description", "effect", "tool", "match", "pattern", "allow-opaque"} {
		if cmd.Flags().Changed(n) {
			return true
		}
	}
	return false
}

// check catches what the server would refuse before asking it.
func (r *ruleDraft) check(cmd *cobra.Command) error {
	if r.Kind != "must_never" && r.Kind != "must_always" {
		return usageErrorf(cmd, "--kind must be must_never or must_always")
	}
	if strings.TrimSpace(r.Description) == "" {
		return usageErrorf(cmd, "--description is required")
	}
	if (r.MatchType == "") != (r.Pattern == "") {
		return usageErrorf(cmd, "--match and --pattern go together")
	}
	return nil
}

func (a *app) rulesCmd() *cobra.Command {
	return group("rules", "The agent's rules and what-if for them: list, preview a change, evaluate a call, shadow rules on trial",
		a.rulesListCmd(), a.rulesPreviewCmd(), a.rulesEvaluateCmd(), a.shadowCmd())
}

// rulesListCmd lists the live rules, so a preview's --remove has ids to take.
func (a *app) rulesListCmd() *cobra.Command {
	return &cobra.Command{Use: "list", Short: "List the rules that apply to the project (its org's and its own)", Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, raw, err := getPage[struct {
				ID          string `json:"id"`
				Scope       string `json:"scope"`
				Kind        string `json:"kind"`
				Effect      string `json:"effect"`
				Description string `json:"description"`
				Tool        string `json:"tool"`
				MatchType   string `json:"match_type"`
				Pattern     string `json:"pattern"`
				Enabled     bool   `json:"enabled"`
			}](cmd.Context(), a, "/api/rules", nil)
			if err != nil {
				return err
			}
			ids := make([]string, len(p.Items))
			rows := make([][]string, len(p.Items))
			for i, r := range p.Items {
				ids[i] = r.ID
				state := "enabled"
				if !r.Enabled {
					state = "disabled"
				}
				rows[i] = []string{r.ID, r.Scope, r.Kind, r.Effect, clip(matches(r.Tool, r.MatchType, r.Pattern), 40), a.out.status(state), clip(r.Description, 40)}
			}
			return a.emit(raw, ids, func() {
				a.out.table([]string{"ID", "SCOPE", "KIND", "EFFECT", "MATCHES", "STATE", "DESCRIPTION"}, rows)
			})
		}}
}

type ruleChange struct {
	SessionID string    `json:"session_id"`
	At        time.Time `json:"at"`
	Tool      string    `json:"tool"`
	Command   string    `json:"command"`
	Change    string    `json:"change"`
	Before    string    `json:"before"`
	After     string    `json:"after"`
	RuleIDs   []string  `json:"rule_ids"`
}

func (a *app) rulesPreviewCmd() *cobra.Command {
	var r ruleDraft
	var days int
	var remove []string
	var file string
	cmd := &cobra.Command{Use: "preview [rule flags] [--remove ID]... [--file RULES.json]",
		Short: "Replay the project's recorded tool calls through a proposed rule change and list the calls it would decide differently",
		Args:  exactArgs(0),
		Example: `  opsagent rules preview --kind must_never --description "no deletes" --tool run_command --match command --pattern "rm *"
  opsagent rules preview --remove 0192f0c4-... --days 30`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			add := []any{}
			if file != "" {
				more, err := a.readRules(file)
				if err != nil {
					return usageErrorf(cmd, "--file: %v", err)
				}
				add = append(add, more...)
			}
			if r.given(cmd) {
				if err := r.check(cmd); err != nil {
					return err
				}
				add = append(add, r)
			}
			if len(add) == 0 && len(remove) == 0 {
				return usageErrorf(cmd, "nothing to preview: give a rule to add (--kind, --description, ...), --file or --remove")
			}
			c, err := a.projectClient(cmd.Context())
			if err != nil {
				return err
			}
			var out struct {
				Days                 int          `json:"days"`
				CallsReplayed        int          `json:"calls_replayed"`
				Truncated            bool         `json:"truncated"`
				NewlyBlocked         int          `json:"newly_blocked"`
				NewlyNeedingApproval int          `json:"newly_needing_approval"`
				NewlyAllowed         int          `json:"newly_allowed"`
				Unchanged            int          `json:"unchanged"`
				Changes              []ruleChange `json:"changes"`
			}
			var raw json.RawMessage
			stop := a.out.spinner("replaying")
			err = c.call(cmd.Context(), "POST", "/api/rules/preview", nil, map[string]any{"days": days, "add": add, "remove": remove}, &out, &raw)
			stop()
			if err != nil {
				return err
			}
			var sessions []string
			seen := map[string]bool{}
			rows := make([][]string, len(out.Changes))
			for i, ch := range out.Changes {
				if !seen[ch.SessionID] {
					seen[ch.SessionID] = true
					sessions = append(sessions, ch.SessionID)
				}
				rows[i] = []string{ch.At.Local().Format("2006-01-02 15:04"), ch.SessionID, ch.Tool, a.out.paint(yellow, strings.ReplaceAll(ch.Change, "_", " ")),
					ch.Before + " → " + ch.After, clip(dash(ch.Command), 60)}
			}
			return a.emit(raw, sessions, func() {
				replayed := strconv.Itoa(out.CallsReplayed) + " call(s) of the last " + strconv.Itoa(out.Days) + " day(s)"
				if out.Truncated {
					replayed += " (the most one preview replays; older calls not included)"
				}
				a.out.fields([][2]string{{"replayed", replayed}, {"newly blocked", strconv.Itoa(out.NewlyBlocked)},
					{"newly needing approval", strconv.Itoa(out.NewlyNeedingApproval)}, {"newly allowed", strconv.Itoa(out.NewlyAllowed)},
					{"unchanged", strconv.Itoa(out.Unchanged)}})
				if len(rows) > 0 {
					fmt.Fprintln(a.inv.Stdout)
					a.out.table([]string{"AT", "SESSION", "TOOL", "CHANGE", "VERDICT", "CALL"}, rows)
				}
			})
		}}
	r.add(cmd)
	f := cmd.Flags()
	f.IntVar(&days, "days", 7, "replay the calls of the last this many days (1-90)")
	f.StringSliceVar(&remove, "remove", nil, "id of a project rule to take away (repeatable)")
	f.StringVar(&file, "file", "", `JSON array of rules to add, as POST /api/rules takes them ("-" reads stdin)`)
	return cmd
}

// readRules reads a JSON array of rule objects (or one object) from a file
// or stdin, passed on as written.
func (a *app) readRules(name string) ([]any, error) {
	var b []byte
	var err error
	if name == "-" {
		b, err = io.ReadAll(io.LimitReader(a.inv.Stdin, 256<<10))
	} else {
		b, err = os.ReadFile(name)
	}
	if err != nil {
		return nil, err
	}
	b = bytes.TrimSpace(b)
	var list []json.RawMessage
	if len(b) > 0 && b[0] == '{' {
		list = []json.RawMessage{b}
	} else if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("not a JSON array of rules: %v", err)
	}
	out := make([]any, len(list))
	for i, r := range list {
		if !json.Valid(r) || len(r) == 0 || r[0] != '{' {
			return nil, fmt.Errorf("rule %d is not a JSON object", i+1)
		}
		out[i] = r
	}
	return out, nil
}

func (a *app) rulesEvaluateCmd() *cobra.Command {
	var tool, args, command string
	cmd := &cobra.Command{Use: "evaluate (--command LINE | --tool NAME [--args JSON])",
		Short: "Decide one tool call against the rules as they are, without running it", Args: exactArgs(0),
		Example: `  opsagent rules evaluate --command "rm -rf /var/log/app"
  opsagent rules evaluate --tool search_knowledge --args '{"query":"disk"}'`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (command == "") == (tool == "") {
				return usageErrorf(cmd, "give either --command (a run_command line) or --tool")
			}
			body := map[string]any{"tool": tool}
			if command != "" {
				body["tool"], body["arguments"] = "run_command", map[string]string{"command": command}
			} else if args != "" {
				if !json.Valid([]byte(args)) || !strings.HasPrefix(strings.TrimSpace(args), "{") {
					return usageErrorf(cmd, "--args must be a JSON object")
				}
				body["arguments"] = json.RawMessage(args)
			}
			c, err := a.projectClient(cmd.Context())
			if err != nil {
				return err
			}
			var out struct {
				Verdict  string   `json:"verdict"`
				Reason   string   `json:"reason"`
				Target   string   `json:"target"`
				Command  string   `json:"command"`
				RuleIDs  []string `json:"rule_ids"`
				Parsed   string   `json:"parsed"`
				Effects  []string `json:"effects"`
				Opaque   []string `json:"opaque"`
				ReadOnly bool     `json:"read_only"`
			}
			var raw json.RawMessage
			if err := c.call(cmd.Context(), "POST", "/api/rules/evaluate", nil, body, &out, &raw); err != nil {
				return err
			}
			return a.emit(raw, out.RuleIDs, func() {
				verdict := out.Verdict
				switch verdict {
				case "allow":
					verdict = a.out.paint(green, verdict)
				case "block":
					verdict = a.out.paint(red, verdict)
				default:
					verdict = a.out.paint(yellow, verdict)
				}
				pairs := [][2]string{{"verdict", verdict}, {"reason", dash(out.Reason)}, {"call", dash(out.Command)},
					{"rules", dash(strings.Join(out.RuleIDs, ", "))}}
				if out.Parsed != "" {
					pairs = append(pairs, [2]string{"parsed", out.Parsed}, [2]string{"effects", dash(strings.Join(out.Effects, ", "))},
						[2]string{"unproven", dash(strings.Join(out.Opaque, "; "))}, [2]string{"read only", yesno(out.ReadOnly)})
				}
				a.out.fields(pairs)
			})
		}}
	f := cmd.Flags()
	f.StringVar(&command, "command", "", "a shell line, decided as the agent's run_command call")
	f.StringVar(&tool, "tool", "", "the tool called")
	f.StringVar(&args, "args", "", "with --tool: the call's arguments (a JSON object)")
	return cmd
}
