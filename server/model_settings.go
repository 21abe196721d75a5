package server

import (
	"fmt"
	"net/url"
	"time"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/agent/runner"
	"github.com/opsagent/opsagent/server/secrets"
	"github.com/opsagent/opsagent/store"
)

// An org's model settings: the primary model's context window and answer
// reserve, whether tool calls written as text are recognised, and the
// fallback models tried in order when the primary fails (each its own
// provider, base URL and key, kept in the vault). Members read them;
// owners change them and test a model with one short call.

// FallbackModelIn is one fallback model as an owner sets it. An api_key
// left out keeps the key already stored at that position (same provider
// and base URL).
type FallbackModelIn struct {
	Provider      string `json:"provider" validate:"required,oneof=openai anthropic"`
	BaseURL       string `json:"base_url,omitempty" validate:"max=2048"`
	Model         string `json:"model" validate:"required,min=1,max=200"`
	APIKey        string `json:"api_key,omitempty" validate:"max=4096"`
	ContextWindow int    `json:"context_window,omitempty" validate:"gte=0,lte=10000000"`
	AnswerReserve int    `json:"answer_reserve,omitempty" validate:"gte=0,lte=1000000"`
	TextToolCalls string `json:"text_tool_calls,omitempty" validate:"oneof=auto on off"`
}

// ModelSettingsPut replaces the org's model settings.
type ModelSettingsPut struct {
	ContextWindow int               `json:"context_window" validate:"gte=0,lte=10000000" doc:"tokens; 0 = the default for the model's name"`
	AnswerReserve int               `json:"answer_reserve" validate:"gte=0,lte=1000000" doc:"tokens kept free for the answer; 0 = an eighth of the window, 512 to 8192"`
	TextToolCalls string            `json:"text_tool_calls" validate:"oneof=auto on off" doc:"recognise tool calls written into the answer; auto = for local base URLs"`
	Fallbacks     []FallbackModelIn `json:"fallbacks" validate:"max=4" doc:"tried in order on a timeout, a 5xx, a refused connection or a long 429"`
}

// FallbackModelOut is a stored fallback, without its key.
type FallbackModelOut struct {
	Position      int    `json:"position"`
	Provider      string `json:"provider"`
	BaseURL       string `json:"base_url,omitempty"`
	Model         string `json:"model"`
	HasAPIKey     bool   `json:"has_api_key"`
	ContextWindow int    `json:"context_window"`
	AnswerReserve int    `json:"answer_reserve"`
	TextToolCalls string `json:"text_tool_calls"`
}

// ModelSettingsOut is what an org's runs will do with their models.
type ModelSettingsOut struct {
	ContextWindow        int                `json:"context_window"`
	AnswerReserve        int                `json:"answer_reserve"`
	TextToolCalls        string             `json:"text_tool_calls"`
	LearnedContextWindow int                `json:"learned_context_window,omitempty" doc:"a window the model server reported in its own overflow error"`
	LearnedModel         string             `json:"learned_model,omitempty"`
	PromptTokens         int                `json:"prompt_tokens" doc:"estimated system prompt and tool definitions every request carries"`
	Fallbacks            []FallbackModelOut `json:"fallbacks"`
	Failovers24h         int                `json:"failovers_24h" doc:"times a run moved to a fallback in the last 24 hours"`
	UpdatedAt            *time.Time         `json:"updated_at,omitempty"`
}

// ModelTestIn picks the model to test: position 0 the primary, N the Nth
// fallback, or an unsaved candidate given by provider (and model, ...).
type ModelTestIn struct {
	Position      int    `json:"position" validate:"gte=0,lte=4"`
	Provider      string `json:"provider,omitempty" validate:"oneof=openai anthropic"`
	BaseURL       string `json:"base_url,omitempty" validate:"max=2048"`
	Model         string `json:"model,omitempty" validate:"max=200"`
	APIKey        string `json:"api_key,omitempty" validate:"max=4096"`
	ContextWindow int    `json:"context_window,omitempty" validate:"gte=0,lte=10000000"`
}

func (s *Server) modelSettingsRoutes() []*Route {
	tags := []string{"organizations"}
	base := "/api/organizations/{org_id}/model-settings"
	return []*Route{
		{Method: "GET", Path: base, Summary: "The org's model settings: context window, answer reserve, text-format tool calls, fallback models", Tags: tags, Auth: AuthAny, Perm: PermOrgRead, Resp: ModelSettingsOut{}, Status: 200, Handle: s.handleGetModelSettings},
		{Method: "PUT", Path: base, Summary: "Replace the org's model settings (owner only; fallback keys go to the vault)", Tags: tags, Auth: AuthHuman, Perm: PermOrgOwner, Body: ModelSettingsPut{}, Resp: ModelSettingsOut{}, Status: 200, MaxBody: 64 << 10, Handle: s.handlePutModelSettings},
		{Method: "POST", Path: base + "/test", Summary: "Make one short call to the primary, a fallback, or a candidate model (owner only)", Tags: tags, Auth: AuthHuman, Perm: PermOrgOwner, Body: ModelTestIn{}, Resp: runner.ModelTest{}, Status: 200, MaxBody: 16 << 10, Handle: s.handleTestModel},
	}
}

// handleGetModelSettings is GET /api/organizations/{org_id}/model-settings.
func (s *Server) handleGetModelSettings(c *Ctx) error {
	orgID, role, err := s.orgRoleParam(c)
	if err != nil {
		return err
	}
	if !RoleHas(role, PermOrgRead) || !c.ID.Can(PermOrgRead) {
		return forbidden("your role does not allow this (org:read)")
	}
	out, err := s.modelSettingsOut(c, orgID)
	if err != nil {
		return err
	}
	return c.JSON(200, out)
}

func (s *Server) modelSettingsOut(c *Ctx, orgID string) (ModelSettingsOut, error) {
	ms, err := s.db.FindModelSettings(c.Context(), orgID)
	if err != nil {
		return ModelSettingsOut{}, err
	}
	fbs, err := s.secrets.LLMFallbacks(c.Context(), orgID)
	if err != nil {
		return ModelSettingsOut{}, err
	}
	n, err := s.db.CountOrgFailovers(c.Context(), orgID, time.Now().Add(-24*time.Hour))
	if err != nil {
		return ModelSettingsOut{}, err
	}
	out := ModelSettingsOut{ContextWindow: ms.ContextWindow, AnswerReserve: ms.AnswerReserve, TextToolCalls: ms.TextToolCalls,
		LearnedContextWindow: ms.LearnedContextWindow, LearnedModel: ms.LearnedModel, Fallbacks: []FallbackModelOut{},
		PromptTokens: s.runner.PromptFloor(c.Context(), orgID), Failovers24h: n}
	if !ms.UpdatedAt.IsZero() {
		out.UpdatedAt = &ms.UpdatedAt
	}
	for _, f := range fbs {
		out.Fallbacks = append(out.Fallbacks, FallbackModelOut{Position: f.Position, Provider: f.Key.Provider, BaseURL: f.Key.BaseURL,
			Model: f.Key.Model, HasAPIKey: f.HasAPIKey, ContextWindow: f.Key.ContextWindow, AnswerReserve: f.Key.AnswerReserve,
			TextToolCalls: orAuto(f.Key.TextToolCalls)})
	}
	return out, nil
}

func orAuto(mode string) string {
	if mode == "" {
		return store.TextToolCallsAuto
	}
	return mode
}

// handlePutModelSettings is PUT /api/organizations/{org_id}/model-settings.
func (s *Server) handlePutModelSettings(c *Ctx) error {
	orgID, err := s.requireOwner(c)
	if err != nil {
		return err
	}
	var req ModelSettingsPut
	if err := c.Bind(&req); err != nil {
		return err
	}
	floor := s.runner.PromptFloor(c.Context(), orgID)
	var errs []FieldError
	checkWindow(&errs, []any{"body"}, req.ContextWindow, req.AnswerReserve, floor)
	keys := make([]secrets.LLMKey, 0, len(req.Fallbacks))
	for i, f := range req.Fallbacks {
		loc := []any{"body", "fallbacks", i}
		if f.BaseURL != "" && !validBaseURL(f.BaseURL) {
			errs = append(errs, FieldError{Loc: append(loc, "base_url"), Msg: "base_url must be an absolute http(s) URL without credentials", Type: "url_parsing"})
		}
		checkWindow(&errs, loc, f.ContextWindow, f.AnswerReserve, floor)
		keys = append(keys, secrets.LLMKey{Provider: f.Provider, BaseURL: f.BaseURL, Model: f.Model, APIKey: f.APIKey,
			ContextWindow: f.ContextWindow, AnswerReserve: f.AnswerReserve, TextToolCalls: orAuto(f.TextToolCalls)})
	}
	if len(errs) > 0 {
		return &ValidationError{Errors: errs}
	}
	if err := s.secrets.PutLLMFallbacks(c.Context(), orgID, c.ID.UserID, keys); err != nil {
		return err
	}
	if err := s.db.PutModelSettings(c.Context(), &store.ModelSettings{OrgID: orgID, ContextWindow: req.ContextWindow,
		AnswerReserve: req.AnswerReserve, TextToolCalls: orAuto(req.TextToolCalls), UpdatedBy: c.ID.UserID}); err != nil {
		return err
	}
	c.Audit("org.model_settings_set", "success", "organization", orgID, map[string]any{
		"context_window": req.ContextWindow, "answer_reserve": req.AnswerReserve, "fallbacks": len(req.Fallbacks)})
	out, err := s.modelSettingsOut(c, orgID)
	if err != nil {
		return err
	}
	return c.JSON(200, out)
}

// checkWindow refuses a window that cannot hold what every request
// carries plus the reserve: every run would fail at its first step.
func checkWindow(errs *[]FieldError, loc []any, window, reserve, floor int) {
	if window == 0 {
		return
	}
	if reserve == 0 {
		reserve = agent.DefaultAnswerReserve(window, 0)
	}
	if reserve >= window {
		*errs = append(*errs, FieldError{Loc: append(append([]any{}, loc...), "answer_reserve"), Type: "less_than",
			Msg: fmt.Sprintf("answer_reserve (%d) must be smaller than context_window (%d)", reserve, window)})
		return
	}
	if window < floor+reserve {
		*errs = append(*errs, FieldError{Loc: append(append([]any{}, loc...), "context_window"), Type: "greater_than_equal",
			Msg: fmt.Sprintf("context_window %d cannot hold the system prompt and tool definitions (about %d tokens) "+
				"plus the answer reserve (%d): set at least %d", window, floor, reserve, floor+reserve)})
	}
}

func validBaseURL(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil
}

// handleTestModel is POST /api/organizations/{org_id}/model-settings/test.
func (s *Server) handleTestModel(c *Ctx) error {
	orgID, err := s.requireOwner(c)
	if err != nil {
		return err
	}
	var req ModelTestIn
	if err := c.Bind(&req); err != nil {
		return err
	}
	var cand *secrets.LLMKey
	if req.Provider != "" {
		if req.Model == "" {
			return invalid("model is required to test a candidate model", "missing", "body", "model")
		}
		if req.BaseURL != "" && !validBaseURL(req.BaseURL) {
			return invalid("base_url must be an absolute http(s) URL without credentials", "url_parsing", "body", "base_url")
		}
		cand = &secrets.LLMKey{Provider: req.Provider, BaseURL: req.BaseURL, Model: req.Model, APIKey: req.APIKey, ContextWindow: req.ContextWindow}
	}
	out := s.runner.TestModel(c.Context(), orgID, req.Position, cand)
	if out.Class == string(llm.ClassConfig) && out.Error == "no fallback model at that position" {
		return store.NotFound("fallback model")
	}
	c.Audit("org.model_tested", map[bool]string{true: "success", false: "failure"}[out.OK], "organization", orgID,
		map[string]any{"position": req.Position, "model": out.Model, "class": out.Class})
	return c.JSON(200, out)
}
