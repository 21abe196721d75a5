package webhook

import (
	"net/http"
	"strings"
)

// ghPayload holds the fields of GitHub webhook events that matter for
// alerting; the event name itself comes from the X-GitHub-Event header.
type ghPayload struct {
	Action     string `json:"action"`
	Ref        string `json:"ref"`
	Compare    string `json:"compare"`
	Repository struct {
		FullName string `json:"full_name"`
		HTMLURL  string `json:"html_url"`
	} `json:"repository"`
	Sender struct {
		Login string `json:"login"`
	} `json:"sender"`
	HeadCommit *struct {
		Message   string `json:"message"`
		Timestamp string `json:"timestamp"`
		URL       string `json:"url"`
	} `json:"head_commit"`
	PullRequest *ghItem `json:"pull_request"`
	Issue       *ghItem `json:"issue"`
	WorkflowRun *ghRun  `json:"workflow_run"`
	CheckRun    *ghRun  `json:"check_run"`
	Alert       *struct {
		Number    text   `json:"number"`
		State     string `json:"state"`
		HTMLURL   string `json:"html_url"`
		CreatedAt string `json:"created_at"`
		Rule      struct {
			Description           string `json:"description"`
			Severity              string `json:"severity"`
			SecuritySeverityLevel string `json:"security_severity_level"`
		} `json:"rule"`
		SecurityAdvisory struct {
			Summary  string `json:"summary"`
			Severity string `json:"severity"`
		} `json:"security_advisory"`
		SecretTypeDisplayName string `json:"secret_type_display_name"`
	} `json:"alert"`
	DeploymentStatus *struct {
		State       string `json:"state"`
		Environment string `json:"environment"`
		TargetURL   string `json:"target_url"`
		CreatedAt   string `json:"created_at"`
	} `json:"deployment_status"`
	Zen string `json:"zen"`
}

type ghItem struct {
	Number    text   `json:"number"`
	Title     string `json:"title"`
	State     string `json:"state"`
	Merged    bool   `json:"merged"`
	HTMLURL   string `json:"html_url"`
	CreatedAt string `json:"created_at"`
}

type ghRun struct {
	ID         text   `json:"id"`
	Name       string `json:"name"`
	Status     string `json:"status"`
	Conclusion string `json:"conclusion"`
	HTMLURL    string `json:"html_url"`
	HeadBranch string `json:"head_branch"`
	CreatedAt  string `json:"created_at"`
	StartedAt  string `json:"started_at"`
}

func parseGitHub(h http.Header, body []byte) (Event, error) {
	var p ghPayload
	if err := decode("github", body, &p); err != nil {
		return Event{}, err
	}
	name := eventWord(firstNonEmpty(h.Get("X-GitHub-Event"), "unknown"))
	typ := name
	if p.Action != "" {
		typ += "." + eventWord(p.Action)
	}
	repo := p.Repository.FullName
	a := Alert{
		Severity: SeverityInfo,
		Status:   StatusFiring,
		GroupKey: repo,
		Labels:   map[string]string{},
	}
	putLabel(a.Labels, "event", name)
	putLabel(a.Labels, "action", p.Action)
	putLabel(a.Labels, "repository", repo)
	putLabel(a.Labels, "sender", p.Sender.Login)
	putLabel(a.Labels, "ref", p.Ref)
	id := ""
	switch {
	case p.Alert != nil:
		al := p.Alert
		id = string(al.Number)
		a.Title = firstNonEmpty(al.Rule.Description, al.SecurityAdvisory.Summary, al.SecretTypeDisplayName, name)
		a.Severity = severity(firstNonEmpty(al.Rule.SecuritySeverityLevel, al.SecurityAdvisory.Severity, al.Rule.Severity), SeverityWarning)
		if resolvedWord(al.State) || resolvedWord(p.Action) || p.Action == "resolved" {
			a.Status = StatusResolved
		}
		a.Links, a.StartsAt = links(al.HTMLURL), parseTime(al.CreatedAt)
	case p.WorkflowRun != nil || p.CheckRun != nil:
		r := p.WorkflowRun
		if r == nil {
			r = p.CheckRun
		}
		id = string(r.ID)
		a.Title = strings.TrimSpace(r.Name + " " + firstNonEmpty(r.Conclusion, r.Status))
		switch r.Conclusion {
		case "failure", "timed_out", "startup_failure":
			a.Severity = SeverityError
		case "cancelled", "action_required":
			a.Severity = SeverityWarning
		case "success":
			a.Status = StatusResolved
		}
		putLabel(a.Labels, "branch", r.HeadBranch)
		putLabel(a.Labels, "conclusion", r.Conclusion)
		a.Links, a.StartsAt = links(r.HTMLURL), parseTime(firstNonEmpty(r.StartedAt, r.CreatedAt))
	case p.PullRequest != nil || p.Issue != nil:
		it := p.PullRequest
		if it == nil {
			it = p.Issue
		}
		id = string(it.Number)
		a.Title = it.Title
		if it.State == "closed" || it.Merged {
			a.Status = StatusResolved
		}
		a.Links, a.StartsAt = links(it.HTMLURL), parseTime(it.CreatedAt)
	case p.DeploymentStatus != nil:
		d := p.DeploymentStatus
		a.Title = "deployment to " + d.Environment + " " + d.State
		switch d.State {
		case "failure", "error":
			a.Severity = SeverityError
		case "success", "inactive":
			a.Status = StatusResolved
		}
		putLabel(a.Labels, "environment", d.Environment)
		a.Links, a.StartsAt = links(d.TargetURL), parseTime(d.CreatedAt)
		id = d.Environment
	case name == "push":
		a.Title = "push to " + p.Ref
		if p.HeadCommit != nil {
			a.Summary = firstLine(p.HeadCommit.Message)
			a.StartsAt = parseTime(p.HeadCommit.Timestamp)
			a.Links = links(p.Compare, p.HeadCommit.URL)
		}
		id = p.Ref
	default:
		a.Title = firstNonEmpty(p.Zen, strings.ReplaceAll(typ, "_", " "))
	}
	if repo != "" {
		a.Title = repo + ": " + a.Title
	}
	a.Fingerprint = "github-" + repo + "-" + name
	if id != "" {
		a.Fingerprint += "-" + id
	}
	a.Links = append(a.Links, links(p.Repository.HTMLURL)...)
	return Event{Type: typ, Alerts: []Alert{a}}, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
