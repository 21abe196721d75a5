package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/eval"
)

func (a *app) evalCmd() *cobra.Command {
	return group("eval", "Replay investigations (scenarios) against models and prompts, scored side by side: run, record",
		a.evalRunCmd(), a.evalRecordCmd())
}

func (a *app) evalRunCmd() *cobra.Command {
	var models []string
	var promptFile, promptVersion, jsonPath, htmlPath, judge string
	var repeat, parallel int
	var maxCost, minPass float64
	var timeout time.Duration
	cmd := &cobra.Command{Use: "run SCENARIOS...", Short: "Run scenario files (or folders of them) against one or more models",
		Long: "Run scenario files (or folders of *.yaml scenarios, such as testdata/evals) against each --model, --repeat times each.\n" +
			"A model is [openai:|anthropic:]NAME[@BASE_URL]: qwen3:8b@http://127.0.0.1:11434/v1 (Ollama),\n" +
			"local@http://127.0.0.1:8081/v1 (llama.cpp's server), anthropic:claude-sonnet-4-5. Without @BASE_URL the\n" +
			"server's LLM settings apply (OPSAGENT_LLM_PROVIDER, OPSAGENT_LLM_BASE_URL); the key is OPSAGENT_LLM_API_KEY.\n" +
			"Every tool and evidence source is answered from the scenario: nothing real is reached. Exit code 1 when\n" +
			"the pass rate is under --min-pass.",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf(cmd, "name at least one scenario file or folder")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			scenarios, err := eval.LoadPaths(args)
			if err != nil {
				return &Error{Code: ExitUsage, Err: err}
			}
			if len(models) == 0 {
				if m := a.getenv("OPSAGENT_LLM_MODEL"); m != "" {
					models = []string{m}
				} else {
					return usageErrorf(cmd, "name a --model (or set OPSAGENT_LLM_MODEL)")
				}
			}
			o := eval.Options{Scenarios: scenarios, Repeat: repeat, Parallel: parallel, MaxCostUSD: maxCost, RunTimeout: timeout,
				PromptVersion: promptVersion}
			if promptFile != "" {
				b, err := os.ReadFile(promptFile)
				if err != nil {
					return &Error{Code: ExitUsage, Err: err}
				}
				o.Prompt = string(b)
				if o.PromptVersion == "" {
					o.PromptVersion = promptVersionOf(o.Prompt, promptFile)
				}
			}
			for _, spec := range models {
				m, err := a.evalModel(spec)
				if err != nil {
					return usageErrorf(cmd, "--model %s: %v", spec, err)
				}
				o.Models = append(o.Models, m)
			}
			if judge != "" {
				m, err := a.evalModel(judge)
				if err != nil {
					return usageErrorf(cmd, "--judge %s: %v", judge, err)
				}
				o.Judge = &eval.Judge{Provider: m.Provider, Model: m.Name}
			}
			rep, err := eval.Run(cmd.Context(), o)
			if err != nil {
				return err
			}
			if jsonPath != "" {
				b, _ := json.MarshalIndent(rep, "", "  ")
				if err := os.WriteFile(jsonPath, append(b, '\n'), 0o644); err != nil {
					return err
				}
			}
			if htmlPath != "" {
				f, err := os.Create(htmlPath)
				if err != nil {
					return err
				}
				if err := rep.WriteHTML(f); err != nil {
					f.Close()
					return err
				}
				if err := f.Close(); err != nil {
					return err
				}
			}
			if a.out.json {
				b, _ := json.Marshal(rep)
				if err := a.out.printJSON(b); err != nil {
					return err
				}
			} else {
				a.printEvalSummary(rep, htmlPath)
			}
			if rate := rep.PassRate(); rate < minPass {
				return &Error{Code: ExitError, Err: fmt.Errorf("pass rate %.0f%% is under --min-pass %.0f%%", 100*rate, 100*minPass)}
			}
			return nil
		}}
	f := cmd.Flags()
	f.StringArrayVar(&models, "model", nil, "a model to evaluate: [openai:|anthropic:]NAME[@BASE_URL] (repeat to compare)")
	f.StringVar(&promptFile, "prompt-file", "", "a candidate system prompt to use instead of the embedded one")
	f.StringVar(&promptVersion, "prompt-version", "", "label of the prompt under test (default: the file's version line)")
	f.IntVar(&repeat, "repeat", 1, "runs per scenario and model")
	f.IntVar(&parallel, "parallel", 2, "runs at once")
	f.Float64Var(&maxCost, "max-cost", 0, "stop starting runs once this many USD are spent (0: no limit)")
	f.Float64Var(&minPass, "min-pass", 0, "exit 1 when the pass rate is under this fraction (0.8 = 80%)")
	f.DurationVar(&timeout, "timeout", 5*time.Minute, "bound on one run")
	f.StringVar(&judge, "judge", "", "a model that grades runs against the scenarios' rubrics (reported apart from the checks)")
	f.StringVar(&jsonPath, "json-report", "", "write the JSON report here")
	f.StringVar(&htmlPath, "html-report", "", "write the self-contained HTML report here")
	return cmd
}

// promptVersionOf is a prompt file's "version: ..." first line, or its name.
func promptVersionOf(text, file string) string {
	first, _, _ := strings.Cut(text, "\n")
	if v, ok := strings.CutPrefix(first, "version: "); ok {
		return strings.TrimSpace(v)
	}
	return file
}

// evalModel reads [openai:|anthropic:]NAME[@BASE_URL].
func (a *app) evalModel(spec string) (eval.Model, error) {
	provider := a.getenv("OPSAGENT_LLM_PROVIDER")
	base := a.getenv("OPSAGENT_LLM_BASE_URL")
	name := spec
	for _, p := range []string{llm.ProviderOpenAI, llm.ProviderAnthropic} {
		if rest, ok := strings.CutPrefix(name, p+":"); ok {
			provider, name = p, rest
			base = ""
		}
	}
	if i := strings.LastIndex(name, "@"); i >= 0 {
		name, base = name[:i], name[i+1:]
		if provider == "" || provider == llm.ProviderAnthropic && !strings.HasPrefix(spec, "anthropic:") {
			provider = llm.ProviderOpenAI
		}
	}
	if provider == "" {
		provider = llm.ProviderOpenAI
	}
	if name == "" {
		return eval.Model{}, errors.New("the model's name is missing")
	}
	cfg := llm.Config{Provider: provider, BaseURL: base, APIKey: a.getenv("OPSAGENT_LLM_API_KEY"), Model: name}
	if err := cfg.Validate(); err != nil {
		return eval.Model{}, err
	}
	p, err := llm.New(cfg)
	if err != nil {
		return eval.Model{}, err
	}
	label := name
	if base != "" {
		label += "@" + base
	}
	return eval.Model{Label: label, Name: name, Provider: p}, nil
}

func (a *app) printEvalSummary(rep *eval.Report, htmlPath string) {
	rows := make([][]string, 0, len(rep.Groups))
	for _, g := range rep.Groups {
		rows = append(rows, []string{g.Model, dash(g.PromptVersion),
			fmt.Sprintf("%d/%d (%.0f%%, 95%% %.0f-%.0f%%)", g.Passed, g.Runs, 100*g.PassRate, 100*g.PassCI[0], 100*g.PassCI[1]),
			fmt.Sprintf("%.0f%%", 100*g.RootCauseRate), fmt.Sprint(g.UnsafeCalls), fmt.Sprintf("%.1f", g.MeanSteps),
			fmt.Sprintf("%.0f", g.MeanTokens), fmt.Sprintf("$%.4f", g.CostUSD), fmt.Sprintf("%.0f ms", g.MeanLatencyMS)})
	}
	a.out.table([]string{"MODEL", "PROMPT", "PASSED", "ROOT CAUSE", "UNSAFE", "STEPS", "TOKENS", "COST", "LATENCY"}, rows)
	for _, r := range rep.Runs {
		if !r.Pass {
			fmt.Fprintf(a.inv.Stdout, "FAIL %s (%s, run %d): %s\n", r.Scenario, r.Model, r.Repeat, strings.Join(r.Failures, "; "))
		}
	}
	if htmlPath != "" {
		fmt.Fprintf(a.inv.Stdout, "report: %s\n", htmlPath)
	}
}

func (a *app) evalRecordCmd() *cobra.Command {
	var output string
	cmd := &cobra.Command{Use: "record INCIDENT_ID", Short: "Turn a past investigation into a scenario (YAML): its alerts, evidence and every tool call with its output, masked",
		Args: exactArgs(1, "INCIDENT_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.projectClient(cmd.Context())
			if err != nil {
				return err
			}
			var rec struct {
				Name string `json:"name"`
				YAML string `json:"yaml"`
			}
			var raw json.RawMessage
			if err := c.call(cmd.Context(), "GET", "/api/incidents/"+url.PathEscape(args[0])+"/eval-scenario", nil, nil, &rec, &raw); err != nil {
				return err
			}
			if a.out.json {
				return a.out.printJSON(raw)
			}
			if output == "" {
				_, err := fmt.Fprint(a.inv.Stdout, rec.YAML)
				return err
			}
			if err := os.WriteFile(output, []byte(rec.YAML), 0o644); err != nil {
				return err
			}
			fmt.Fprintf(a.inv.Stdout, "wrote %s (scenario %s): edit its expect section, then: opsagent eval run %s --model ...\n", output, rec.Name, output)
			return nil
		}}
	cmd.Flags().StringVarP(&output, "output", "o", "", "write the scenario to this file (default: standard output)")
	return cmd
}
