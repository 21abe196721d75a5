package webhook

import (
	"net/http"
	"strings"
)

// glPayload holds the GitLab webhook fields used for alerting. GitLab
// names the event in the body (object_kind, or event_name for system
// hooks) and in the X-Gitlab-Event header ("Pipeline Hook").
type glPayload struct {
	ObjectKind   string `json:"object_kind"`
	EventName    string `json:"event_name"`
	Ref          string `json:"ref"`
	UserUsername string `json:"user_username"`
	UserName     string `json:"user_name"`
	User         struct {
		Username string `json:"username"`
	} `json:"user"`
	Project struct {
		PathWithNamespace string `json:"path_with_namespace"`
		WebURL            string `json:"web_url"`
	} `json:"project"`
	ProjectName      string `json:"project_name"`
	ObjectAttributes *struct {
		ID        text   `json:"id"`
		IID       text   `json:"iid"`
		Title     string `json:"title"`
		Action    string `json:"action"`
		State     string `json:"state"`
		Status    string `json:"status"`
		Ref       string `json:"ref"`
		URL       string `json:"url"`
		CreatedAt string `json:"created_at"`
		Severity  string `json:"severity"`
		Note      string `json:"note"`
	} `json:"object_attributes"`
	// Job (object_kind "build") fields.
	BuildID            text   `json:"build_id"`
	BuildName          string `json:"build_name"`
	BuildStatus        string `json:"build_status"`
	BuildFailureReason string `json:"build_failure_reason"`
	BuildCreatedAt     string `json:"build_created_at"`
	// Deployment fields.
	DeploymentID    text   `json:"deployment_id"`
	Status          string `json:"status"`
	Environment     text   `json:"environment"` // a string on deployments, an object on jobs
	DeployableURL   string `json:"deployable_url"`
	StatusChangedAt string `json:"status_changed_at"`
	CheckoutSHA     string `json:"checkout_sha"`
	Commits         []struct {
		Message string `json:"message"`
		URL     string `json:"url"`
	} `json:"commits"`
}

func parseGitLab(h http.Header, body []byte) (Event, error) {
	var p glPayload
	if err := decode("gitlab", body, &p); err != nil {
		return Event{}, err
	}
	kind := eventWord(firstNonEmpty(p.ObjectKind, p.EventName,
		strings.TrimSuffix(h.Get("X-Gitlab-Event"), " Hook"), "unknown"))
	project := firstNonEmpty(p.Project.PathWithNamespace, p.ProjectName)
	a := Alert{
		Title:    kind,
		Severity: SeverityInfo,
		Status:   StatusFiring,
		GroupKey: project,
		Labels:   map[string]string{},
	}
	putLabel(a.Labels, "event", kind)
	putLabel(a.Labels, "project", project)
	putLabel(a.Labels, "user", firstNonEmpty(p.UserUsername, p.User.Username, p.UserName))
	state, id := "", ""
	switch oa := p.ObjectAttributes; {
	case kind == "build":
		state, id = p.BuildStatus, string(p.BuildID)
		a.Title = "job " + p.BuildName + " " + p.BuildStatus
		if p.BuildStatus == "failed" {
			putLabel(a.Labels, "failure_reason", p.BuildFailureReason)
		}
		a.StartsAt = parseTime(p.BuildCreatedAt)
		putLabel(a.Labels, "ref", p.Ref)
	case kind == "deployment":
		state, id = p.Status, string(p.DeploymentID)
		a.Title = "deployment to " + string(p.Environment) + " " + p.Status
		putLabel(a.Labels, "environment", string(p.Environment))
		a.Links, a.StartsAt = links(p.DeployableURL), parseTime(p.StatusChangedAt)
	case oa != nil:
		state = firstNonEmpty(oa.Action, oa.Status)
		id = firstNonEmpty(string(oa.IID), string(oa.ID))
		a.Title = firstNonEmpty(oa.Title, firstLine(oa.Note), kind+" "+oa.Status)
		a.Severity = severity(oa.Severity, SeverityInfo)
		a.Links, a.StartsAt = links(oa.URL), parseTime(oa.CreatedAt)
		putLabel(a.Labels, "ref", oa.Ref)
		putLabel(a.Labels, "state", oa.State)
		if oa.State == "closed" || oa.State == "merged" || oa.State == "resolved" || oa.State == "dismissed" {
			a.Status = StatusResolved
		}
	case kind == "push" || kind == "tag_push":
		id = p.Ref
		a.Title = strings.ReplaceAll(kind, "_", " ") + " to " + p.Ref
		putLabel(a.Labels, "ref", p.Ref)
		if n := len(p.Commits); n > 0 {
			a.Summary = firstLine(p.Commits[n-1].Message)
			a.Links = links(p.Commits[n-1].URL)
		}
	}
	switch state {
	case "failed":
		a.Severity = SeverityError
	case "canceled", "canceling":
		if a.Severity == SeverityInfo {
			a.Severity = SeverityWarning
		}
	case "success", "merge", "close":
		a.Status = StatusResolved
	}
	putLabel(a.Labels, "status", state)
	typ := kind
	if state != "" {
		typ += "." + eventWord(state)
	}
	if project != "" {
		a.Title = project + ": " + a.Title
	}
	a.Fingerprint = "gitlab-" + project + "-" + kind
	if id != "" {
		a.Fingerprint += "-" + id
	}
	a.Links = append(a.Links, links(p.Project.WebURL)...)
	return Event{Type: typ, Alerts: []Alert{a}}, nil
}
