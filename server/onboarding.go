package server

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	"github.com/opsagent/opsagent/scheduler"
	"github.com/opsagent/opsagent/store"
)

// BootstrapRequest turns a new account into a working set-up: the current
// organization is renamed, a first project created and, optionally, a first
// task made from a template.
type BootstrapRequest struct {
	OrgName            string `json:"org_name" validate:"required,min=1,max=120"`
	ProjectName        string `json:"project_name" validate:"required,min=1,max=120"`
	ProjectDescription string `json:"project_description,omitempty" validate:"max=2000"`
	TaskTemplate       string `json:"task_template,omitempty" validate:"max=120"`
}

// BootstrapResponse is what bootstrap made. With an Idempotency-Key, a
// repeat returns this same body (and header Idempotent-Replayed: true).
type BootstrapResponse struct {
	Organization OrganizationOut          `json:"organization"`
	Project      ProjectOut               `json:"project"`
	TaskID       *string                  `json:"task_id"`
	Onboarding   OnboardingStatusResponse `json:"onboarding"`
}

// OnboardingStatusResponse is the caller's onboarding: status is pending,
// skipped or completed.
type OnboardingStatusResponse struct {
	Status    string     `json:"status"`
	Completed bool       `json:"completed"`
	Skipped   bool       `json:"skipped"`
	OrgID     *string    `json:"org_id"`
	ProjectID *string    `json:"project_id"`
	TaskID    *string    `json:"task_id"`
	UpdatedAt *time.Time `json:"updated_at"`
}

func onboardingOut(o *store.Onboarding) OnboardingStatusResponse {
	out := OnboardingStatusResponse{Status: o.Status, Completed: o.Status == "completed", Skipped: o.Status == "skipped",
		OrgID: strPtr(o.OrgID), ProjectID: strPtr(o.ProjectID), TaskID: strPtr(o.TaskID)}
	if !o.UpdatedAt.IsZero() {
		t := o.UpdatedAt
		out.UpdatedAt = &t
	}
	return out
}

func (s *Server) onboardingRoutes() []*Route {
	tags := []string{"onboarding"}
	return []*Route{
		{Method: "POST", Path: "/api/onboarding/bootstrap", Summary: "Set up the current organization, a first project and optionally a first task; honours Idempotency-Key", Tags: tags, Auth: AuthHuman, Perm: PermOrgWrite, Body: BootstrapRequest{}, Resp: BootstrapResponse{}, Status: 200, MaxBody: 16 << 10, Handle: s.handleBootstrap},
		{Method: "GET", Path: "/api/onboarding/status", Summary: "My onboarding status", Tags: tags, Auth: AuthHuman, Resp: OnboardingStatusResponse{}, Status: 200, Handle: s.handleOnboardingStatus},
		{Method: "POST", Path: "/api/onboarding/skip", Summary: "Skip onboarding", Tags: tags, Auth: AuthHuman, Resp: OnboardingStatusResponse{}, Status: 200, Handle: s.handleOnboardingSet("skipped")},
		{Method: "POST", Path: "/api/onboarding/complete", Summary: "Mark onboarding complete", Tags: tags, Auth: AuthHuman, Resp: OnboardingStatusResponse{}, Status: 200, Handle: s.handleOnboardingSet("completed")},
	}
}

// handleBootstrap is POST /api/onboarding/bootstrap. Everything, including
// the stored response of the Idempotency-Key, commits in one transaction:
// the same key twice returns the first answer and creates nothing; the same
// key with a different body is 409; without a key, a second bootstrap of a
// completed onboarding is 409.
func (s *Server) handleBootstrap(c *Ctx) error {
	var req BootstrapRequest
	if err := c.Bind(&req); err != nil {
		return err
	}
	key := strings.TrimSpace(c.R.Header.Get("Idempotency-Key"))
	if len(key) > 255 {
		return invalid("String should have at most 255 characters", "string_too_long", "header", "idempotency-key")
	}
	if err := trimNonBlank(&req.OrgName, "org_name"); err != nil {
		return err
	}
	if err := trimNonBlank(&req.ProjectName, "project_name"); err != nil {
		return err
	}
	if !c.ID.Can(PermProjectAdmin) {
		s.onPermissionDenied(c)
		return &store.Error{Code: store.EForbidden, Message: "bootstrap creates a project, which needs projects:admin", Reason: "permission_denied"}
	}
	canon, _ := json.Marshal(req)
	sum := sha256.Sum256(canon)
	reqHash := hex.EncodeToString(sum[:])
	ctx := c.Context()
	var task *store.Task
	if req.TaskTemplate != "" {
		var err error
		if task, err = bootstrapTask(req.TaskTemplate, c.ID.UserID); err != nil {
			return err
		}
	}
	res, err := s.db.Bootstrap(ctx, store.BootstrapInput{UserID: c.ID.UserID, OrgID: c.OrgID(), OrgName: req.OrgName,
		Project: &store.Project{Name: req.ProjectName, Description: req.ProjectDescription}, Task: task, NextRun: scheduler.NextRun,
		IdemKey: key, RequestHash: reqHash, Response: func(r *store.BootstrapResult) (string, error) {
			body, err := json.Marshal(bootstrapOut(r))
			return string(body), err
		}})
	if err != nil {
		return err
	}
	if replay := res.Replay; replay != nil {
		c.W.Header().Set("Idempotent-Replayed", "true")
		c.W.Header().Set("Content-Type", "application/json")
		c.W.WriteHeader(replay.Status)
		_, _ = c.W.Write([]byte(replay.Body + "\n")) // as c.JSON writes it
		// A replay changes nothing; mark it so the generic audit event is not written.
		markAudited(ctx)
		return nil
	}
	out := bootstrapOut(res)
	c.Audit("onboarding.bootstrapped", "success", "project", out.Project.ID, map[string]any{"org_name": req.OrgName, "task_id": out.TaskID})
	return c.JSON(200, out)
}

func bootstrapOut(r *store.BootstrapResult) BootstrapResponse {
	return BootstrapResponse{Organization: orgOut(r.Org), Project: projectOut(r.Project), TaskID: strPtr(r.Onboarding.TaskID),
		Onboarding: onboardingOut(r.Onboarding)}
}

// handleOnboardingStatus is GET /api/onboarding/status.
func (s *Server) handleOnboardingStatus(c *Ctx) error {
	o, err := s.db.FindOnboarding(c.Context(), c.ID.UserID)
	if err != nil {
		return err
	}
	return c.JSON(200, onboardingOut(o))
}

// handleOnboardingSet serves POST /api/onboarding/skip and /complete.
func (s *Server) handleOnboardingSet(status string) func(*Ctx) error {
	return func(c *Ctx) error {
		o, err := s.db.SetOnboardingStatus(c.Context(), c.ID.UserID, status)
		if err != nil {
			return err
		}
		c.Audit("onboarding."+status, "success", "user", c.ID.UserID, nil)
		return c.JSON(200, onboardingOut(o))
	}
}
