package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/opsagent/opsagent/server/eval"
	"github.com/opsagent/opsagent/store"
)

// Evaluations (issue 37): an org replays investigation scenarios against
// its models, scored side by side. The runner (server/eval) answers every
// tool and evidence source from the scenario, so an evaluation reaches no
// connector, integration, channel or project: only the org's LLM.

// Bounds of one evaluation: what a person can read in one report, and a
// cap on the LLM spend one request can start.
const (
	evalMaxScenarios = 100
	evalMaxModels    = 4
	evalMaxRepeat    = 10
	evalMaxRuns      = 400
	evalRunTimeout   = 5 * time.Minute
)

// EvalScenarioIn is one scenario file.
type EvalScenarioIn struct {
	Name string `json:"name" validate:"max=200" doc:"the file's name, for error messages"`
	YAML string `json:"yaml" validate:"required,min=1,max=262144" doc:"the scenario (testdata/evals/README.md documents the schema)"`
}

// EvalCreate starts an evaluation.
type EvalCreate struct {
	Scenarios  []EvalScenarioIn `json:"scenarios" validate:"required,min=1,max=100"`
	Models     []string         `json:"models" validate:"max=4" doc:"model names on the org's LLM (default: its configured model); compared side by side"`
	Repeat     int              `json:"repeat" validate:"gte=0,lte=10" doc:"runs per scenario and model (default 1)"`
	MaxCostUSD float64          `json:"max_cost_usd" validate:"gte=0" doc:"stop starting runs once this is spent (0: no limit beyond the org's budgets)"`
}

// EvalOut is an evaluation; Report is set once it finished.
type EvalOut struct {
	ID         string       `json:"id"`
	Status     string       `json:"status" doc:"running, completed, failed, interrupted"`
	Models     []string     `json:"models"`
	Scenarios  int          `json:"scenarios"`
	Repeat     int          `json:"repeat"`
	PassRate   float64      `json:"pass_rate"`
	Error      string       `json:"error"`
	CreatedBy  string       `json:"created_by"`
	CreatedAt  time.Time    `json:"created_at"`
	FinishedAt *time.Time   `json:"finished_at"`
	ReportURL  string       `json:"report_url" doc:"the self-contained HTML report"`
	Report     *eval.Report `json:"report,omitempty"`
}

// EvalPage is a page of evaluations, newest first.
type EvalPage struct {
	Items  []EvalOut `json:"items"`
	Total  int       `json:"total"`
	Limit  int       `json:"limit"`
	Offset int       `json:"offset"`
}

// EvalListQuery pages GET /api/evals.
type EvalListQuery struct {
	Limit  int `query:"limit" default:"25" validate:"gte=1,lte=200"`
	Offset int `query:"offset" default:"0" validate:"gte=0"`
}

func (s *Server) evalRoutes() []*Route {
	tags := []string{"evals"}
	return []*Route{
		{Method: "POST", Path: "/api/evals", Summary: "Start an evaluation: scenarios replayed against the org's models (202; poll GET /api/evals/{eval_id})",
			Tags: tags, Auth: AuthAny, Perm: PermTasksRun, Body: EvalCreate{}, Resp: EvalOut{}, Status: 202, MaxBody: 8 << 20, Handle: s.handleCreateEval},
		{Method: "GET", Path: "/api/evals", Summary: "List the org's evaluations, newest first",
			Tags: tags, Auth: AuthAny, Perm: PermSessionsRead, Query: EvalListQuery{}, Resp: EvalPage{}, Status: 200, Handle: s.handleListEvals},
		{Method: "GET", Path: "/api/evals/{eval_id}", Summary: "An evaluation with its report (pass rates, root-cause hits, unsafe calls, steps, tokens, cost, each run's transcript)",
			Tags: tags, Auth: AuthAny, Perm: PermSessionsRead, Resp: EvalOut{}, Status: 200, Handle: s.handleGetEval},
		{Method: "GET", Path: "/api/evals/{eval_id}/report.html", Summary: "An evaluation's report as one self-contained HTML page",
			Tags: tags, Auth: AuthAny, Perm: PermSessionsRead, Status: 200, Handle: s.handleEvalHTML},
	}
}

func evalOut(e *store.EvalRun) (EvalOut, error) {
	out := EvalOut{ID: e.ID, Status: e.Status, Models: e.Models, Scenarios: e.Scenarios, Repeat: e.Repeats, PassRate: e.PassRate,
		Error: e.Error, CreatedBy: e.CreatedBy, CreatedAt: e.CreatedAt, ReportURL: "/api/evals/" + e.ID + "/report.html"}
	if out.Models == nil {
		out.Models = []string{}
	}
	if !e.FinishedAt.IsZero() {
		t := e.FinishedAt
		out.FinishedAt = &t
	}
	if e.Report != "" {
		var r eval.Report
		if err := json.Unmarshal([]byte(e.Report), &r); err != nil {
			return out, err
		}
		out.Report = &r
	}
	return out, nil
}

func (s *Server) handleCreateEval(c *Ctx) error {
	var req EvalCreate
	if err := c.Bind(&req); err != nil {
		return err
	}
	scenarios := make([]*eval.Scenario, 0, len(req.Scenarios))
	seen := map[string]bool{}
	for i, in := range req.Scenarios {
		name := in.Name
		if name == "" {
			name = fmt.Sprintf("scenario %d", i+1)
		}
		sc, err := eval.Parse(name, []byte(in.YAML))
		if err != nil {
			return invalid(err.Error(), "value_error", "body", "scenarios", i, "yaml")
		}
		if seen[sc.Name] {
			return invalid(fmt.Sprintf("two scenarios are named %q", sc.Name), "value_error", "body", "scenarios", i, "yaml")
		}
		seen[sc.Name] = true
		scenarios = append(scenarios, sc)
	}
	if req.Repeat == 0 {
		req.Repeat = 1
	}
	provider, defModel, err := s.runner.Provider(c.Context(), c.OrgID())
	if err != nil {
		return &store.Error{Code: store.EConflict, Reason: "llm_not_configured", Message: "no LLM is configured for this organization: " + err.Error()}
	}
	names := req.Models
	if len(names) == 0 {
		names = []string{defModel}
	}
	models := make([]eval.Model, 0, len(names))
	for i, n := range names {
		n = strings.TrimSpace(n)
		if n == "" || len(n) > 200 {
			return invalid("a model name of 1 to 200 characters", "value_error", "body", "models", i)
		}
		models = append(models, eval.Model{Name: n, Label: n, Provider: provider})
	}
	if runs := len(scenarios) * len(models) * req.Repeat; runs > evalMaxRuns {
		return invalid(fmt.Sprintf("%d runs (scenarios x models x repeat) is over the limit of %d", runs, evalMaxRuns), "value_error", "body", "repeat")
	}
	userID := ""
	if c.ID != nil {
		userID = c.ID.UserID
	}
	run, err := s.db.InsertEvalRun(c.Context(), store.EvalRun{OrgID: c.OrgID(), CreatedBy: userID, Models: names,
		Scenarios: len(scenarios), Repeats: req.Repeat})
	if err != nil {
		return err
	}
	c.Audit("eval.started", "success", "eval", run.ID, map[string]any{"scenarios": len(scenarios), "models": names, "repeat": req.Repeat})
	opts := eval.Options{Scenarios: scenarios, Models: models, Repeat: req.Repeat, Parallel: 2, MaxCostUSD: req.MaxCostUSD,
		RunTimeout: evalRunTimeout, Now: s.Now}
	s.startEval(run, opts)
	out, _ := evalOut(run)
	return c.JSON(202, out)
}

// startEval runs an evaluation in the background, bounded by the server's
// lifetime: a shutdown cancels it, and the next start marks it interrupted.
func (s *Server) startEval(run *store.EvalRun, o eval.Options) {
	s.evalOnce.Do(s.initEvals)
	s.evalWG.Add(1)
	go func() {
		defer s.evalWG.Done()
		ctx, cancel := context.WithTimeout(s.evalCtx, time.Duration(len(o.Scenarios)*len(o.Models)*max(o.Repeat, 1))*evalRunTimeout)
		defer cancel()
		status, rate, report, errText := store.EvalCompleted, 0.0, "", ""
		rep, err := eval.Run(ctx, o)
		switch {
		case errors.Is(ctx.Err(), context.Canceled):
			status, errText = store.EvalInterrupted, "the server stopped while the evaluation ran; start it again"
		case err != nil:
			status, errText = store.EvalFailed, err.Error()
		default:
			rate = rep.PassRate()
			b, _ := json.Marshal(rep)
			report = string(b)
		}
		if err := s.db.FinishEvalRun(context.WithoutCancel(ctx), run.OrgID, run.ID, status, rate, report, errText); err != nil {
			s.log.Warn("eval: outcome not saved", "eval_id", run.ID, "err", err)
		}
	}()
}

// stopEvals cancels the evaluations in flight and waits for their
// outcomes (interrupted) to be saved.
func (s *Server) stopEvals() {
	s.evalOnce.Do(s.initEvals)
	s.evalCancel()
	s.evalWG.Wait()
}

func (s *Server) initEvals() { s.evalCtx, s.evalCancel = context.WithCancel(context.Background()) }

func (s *Server) handleListEvals(c *Ctx) error {
	var q EvalListQuery
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	runs, total, err := s.db.ListEvalRuns(c.Context(), c.OrgID(), q.Limit, q.Offset)
	if err != nil {
		return err
	}
	page := EvalPage{Items: make([]EvalOut, 0, len(runs)), Total: total, Limit: q.Limit, Offset: q.Offset}
	for i := range runs {
		o, _ := evalOut(&runs[i])
		page.Items = append(page.Items, o)
	}
	return c.JSON(200, page)
}

func (s *Server) findEval(c *Ctx) (*store.EvalRun, error) {
	id, err := c.IDParam("eval_id")
	if err != nil {
		return nil, err
	}
	return s.db.FindEvalRun(c.Context(), c.OrgID(), id)
}

func (s *Server) handleGetEval(c *Ctx) error {
	run, err := s.findEval(c)
	if err != nil {
		return err
	}
	out, err := evalOut(run)
	if err != nil {
		return err
	}
	return c.JSON(200, out)
}

func (s *Server) handleEvalHTML(c *Ctx) error {
	run, err := s.findEval(c)
	if err != nil {
		return err
	}
	out, err := evalOut(run)
	if err != nil {
		return err
	}
	if out.Report == nil {
		return &store.Error{Code: store.EConflict, Reason: "eval_not_finished", Message: "the evaluation is " + run.Status + ": its report exists once it has completed"}
	}
	h := c.W.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	// The page has no script and loads nothing: forbid both outright.
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	c.W.WriteHeader(200)
	return out.Report.WriteHTML(c.W)
}
