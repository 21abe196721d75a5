package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/agent/runner"
)

// installAgent builds the session runner over the policy layer, recovers
// sessions a stopped process left running and makes the runner the task
// executor (unless Deps brings one).
func (s *Server) installAgent(d *Deps) error {
	prices, err := ParseLLMPrices(s.cfg.LLMPrices)
	if err != nil {
		return err
	}
	s.runner = runner.New(runner.Deps{DB: s.db, Knowledge: s.knowledge, Keys: s.secrets, Prices: prices,
		LLM:    llm.Config{Provider: s.cfg.LLMProvider, BaseURL: s.cfg.LLMBaseURL, APIKey: s.cfg.LLMAPIKey, Model: s.cfg.LLMModel},
		Policy: policyLayer{s}, Logger: s.log, Now: func() time.Time { return s.Now() }, Telemetry: s.metrics,
		ShutdownGrace: s.cfg.ShutdownGrace, ResumeLimit: s.cfg.RunResumeLimit, Resumed: s.relayResumed,
		Investigator: investigator{s}})
	s.runner.Recover(context.Background())
	if d.TaskExecutor == nil {
		d.TaskExecutor = s.runner
	}
	return nil
}

// ParseLLMPrices reads the --llm-prices JSON over llm.DefaultPrices();
// "" gives the defaults.
func ParseLLMPrices(js string) (llm.Prices, error) {
	prices := llm.DefaultPrices()
	if strings.TrimSpace(js) == "" {
		return prices, nil
	}
	var extra map[string]llm.Price
	dec := json.NewDecoder(strings.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&extra); err != nil {
		return nil, fmt.Errorf(`llm-prices must be a JSON object like {"model":{"input_per_mtok":1.5,"output_per_mtok":6}}: %v`, err)
	}
	for model, p := range extra {
		if p.InputPerMTok < 0 || p.OutputPerMTok < 0 {
			return nil, fmt.Errorf("llm-prices: negative price for %q", model)
		}
		prices[model] = p
	}
	return prices, nil
}
