package store

import "context"

// bootstrapScope is the idempotency scope of Bootstrap's keys.
const bootstrapScope = "onboarding.bootstrap"

// BootstrapInput is what onboarding's bootstrap makes of a user's current
// org: its name, a first project and, optionally, a first task.
type BootstrapInput struct {
	UserID, OrgID string
	OrgName       string
	Project       *Project    // Name and Description; OrgID is filled in
	Task          *Task       // optional; OrgID and ProjectID are filled in
	NextRun       NextRunFunc // the task's schedule
	// IdemKey, when not "", makes the call idempotent: the same key again
	// returns the stored response and creates nothing (a different
	// RequestHash with it is a conflict).
	IdemKey, RequestHash string
	// Response renders the answer stored with IdemKey, from the result.
	Response func(*BootstrapResult) (string, error)
}

// BootstrapResult is what Bootstrap made, or the stored answer it replays.
type BootstrapResult struct {
	Org        *Organization
	Project    *Project
	Onboarding *Onboarding
	Replay     *StoredResponse // the key was used before: nothing else is set
}

// Bootstrap renames the org, creates the project (and task), completes the
// user's onboarding and stores the response of the idempotency key, all in
// one transaction: a failure leaves nothing half made. A second bootstrap
// of a completed onboarding (without the first key) is a conflict.
func (db *DB) Bootstrap(ctx context.Context, in BootstrapInput) (*BootstrapResult, error) {
	var out *BootstrapResult
	err := db.Write(ctx, func(tx *Tx) error {
		out = nil
		if in.IdemKey != "" {
			prev, err := findIdempotentTx(ctx, tx, in.UserID, bootstrapScope, in.IdemKey)
			if err != nil {
				return err
			}
			if prev != nil {
				if prev.RequestHash != in.RequestHash {
					return &Error{Code: EConflict, Message: "this Idempotency-Key was used with a different request", Reason: "idempotency_key_reused"}
				}
				out = &BootstrapResult{Replay: prev}
				return nil
			}
		}
		ob, err := findOnboarding(ctx, tx, in.UserID)
		if err != nil {
			return err
		}
		if ob.ProjectID != "" {
			return &Error{Code: EConflict, Message: "onboarding was already bootstrapped", Reason: "already_bootstrapped"}
		}
		if err := renameOrgTx(ctx, tx, in.OrgID, in.OrgName); err != nil {
			return err
		}
		org, err := findOrgTx(ctx, tx, in.OrgID)
		if err != nil {
			return err
		}
		p := in.Project
		p.OrgID = org.ID
		if err := createProjectTx(ctx, tx, p); err != nil {
			return err
		}
		ob = &Onboarding{UserID: in.UserID, Status: "completed", OrgID: org.ID, ProjectID: p.ID}
		if in.Task != nil {
			in.Task.OrgID, in.Task.ProjectID = org.ID, p.ID
			if err := createTaskTx(ctx, tx, in.Task, in.NextRun); err != nil {
				return err
			}
			ob.TaskID = in.Task.ID
		}
		if err := setOnboardingTx(ctx, tx, ob); err != nil {
			return err
		}
		out = &BootstrapResult{Org: org, Project: p, Onboarding: ob}
		if in.IdemKey == "" {
			return nil
		}
		body, err := in.Response(out)
		if err != nil {
			return err
		}
		return saveIdempotentTx(ctx, tx, in.UserID, bootstrapScope, in.IdemKey, StoredResponse{RequestHash: in.RequestHash, Status: 200, Body: body})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
