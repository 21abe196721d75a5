package webhook

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// Change is a deploy, release, push or pipeline that a GitHub or GitLab
// delivery reports, for the project's change feed (issue 36). Deliveries
// that report no change (issues, failing checks, pushes to other
// branches) give none.
type Change struct {
	Kind        string // deploy, release, push, pipeline, tag
	Title       string
	Service     string
	Environment string
	Description string
	URL         string
	Author      string
	Labels      map[string]string
	ExternalID  string
	OccurredAt  time.Time
}

// ChangeFrom reads the change a delivery reports, if any. It is separate
// from Parse (which turns deliveries into alerts) so the alert path stays
// as it was; it reads only the fields it needs.
func ChangeFrom(p Provider, h http.Header, body []byte) (*Change, bool) {
	switch p {
	case ProviderGitHub:
		// The event name decides before any decoding: most deliveries
		// (issues, checks, pull requests) report no change.
		switch ev := strings.ToLower(strings.TrimSpace(h.Get("X-GitHub-Event"))); ev {
		case "deployment", "deployment_status", "release", "push":
			return githubChange(ev, body)
		}
	case ProviderGitLab:
		switch h.Get("X-Gitlab-Event") {
		case "Deployment Hook", "Pipeline Hook", "Tag Push Hook":
			return gitlabChange(body)
		}
	}
	return nil, false
}

type ghChangePayload struct {
	Action     string `json:"action"`
	Ref        string `json:"ref"`
	After      string `json:"after"`
	Deleted    bool   `json:"deleted"`
	Compare    string `json:"compare"`
	Repository struct {
		Name          string `json:"name"`
		FullName      string `json:"full_name"`
		HTMLURL       string `json:"html_url"`
		DefaultBranch string `json:"default_branch"`
	} `json:"repository"`
	Sender struct {
		Login string `json:"login"`
	} `json:"sender"`
	HeadCommit *struct {
		Message   string `json:"message"`
		Timestamp string `json:"timestamp"`
	} `json:"head_commit"`
	Deployment *struct {
		ID          text   `json:"id"`
		SHA         string `json:"sha"`
		Ref         string `json:"ref"`
		Environment string `json:"environment"`
		Description string `json:"description"`
		CreatedAt   string `json:"created_at"`
		Creator     struct {
			Login string `json:"login"`
		} `json:"creator"`
	} `json:"deployment"`
	DeploymentStatus *struct {
		ID          text   `json:"id"`
		State       string `json:"state"`
		Environment string `json:"environment"`
		TargetURL   string `json:"target_url"`
		Description string `json:"description"`
		CreatedAt   string `json:"created_at"`
	} `json:"deployment_status"`
	Release *struct {
		ID          text   `json:"id"`
		TagName     string `json:"tag_name"`
		Name        string `json:"name"`
		Body        string `json:"body"`
		HTMLURL     string `json:"html_url"`
		PublishedAt string `json:"published_at"`
		Author      struct {
			Login string `json:"login"`
		} `json:"author"`
	} `json:"release"`
}

func githubChange(event string, body []byte) (*Change, bool) {
	var p ghChangePayload
	if json.Unmarshal(body, &p) != nil {
		return nil, false
	}
	repo := p.Repository.FullName
	c := &Change{Service: firstNonEmpty(p.Repository.Name, repo), Author: p.Sender.Login,
		Labels: map[string]string{"repository": repo}}
	switch event {
	case "deployment_status":
		d, s := p.Deployment, p.DeploymentStatus
		// Only a deployment's outcome is a change; queued and in-progress
		// states are on their way to one.
		if d == nil || s == nil || (s.State != "success" && s.State != "failure" && s.State != "error") {
			return nil, false
		}
		c.Kind, c.Environment = "deploy", firstNonEmpty(s.Environment, d.Environment)
		c.Title = "Deploy " + repo + "@" + short(d.SHA) + " to " + c.Environment + ": " + s.State
		c.Description, c.URL = firstNonEmpty(s.Description, d.Description), s.TargetURL
		c.ExternalID = "github:deployment_status:" + string(s.ID)
		c.OccurredAt = parseTime(s.CreatedAt)
		putLabel(c.Labels, "sha", d.SHA)
		putLabel(c.Labels, "ref", d.Ref)
		putLabel(c.Labels, "state", s.State)
	case "deployment":
		d := p.Deployment
		if d == nil || (p.Action != "" && p.Action != "created") {
			return nil, false
		}
		c.Kind, c.Environment = "deploy", d.Environment
		c.Title = "Deployment of " + repo + "@" + short(d.SHA) + " to " + d.Environment + " started"
		c.Description, c.Author = d.Description, firstNonEmpty(d.Creator.Login, c.Author)
		c.ExternalID = "github:deployment:" + string(d.ID)
		c.OccurredAt = parseTime(d.CreatedAt)
		putLabel(c.Labels, "sha", d.SHA)
		putLabel(c.Labels, "ref", d.Ref)
	case "release":
		r := p.Release
		if r == nil || (p.Action != "published" && p.Action != "released") {
			return nil, false
		}
		c.Kind = "release"
		c.Title = "Release " + firstNonEmpty(r.Name, r.TagName) + " of " + repo
		c.Description, c.URL, c.Author = r.Body, r.HTMLURL, firstNonEmpty(r.Author.Login, c.Author)
		c.ExternalID = "github:release:" + string(r.ID)
		c.OccurredAt = parseTime(r.PublishedAt)
		putLabel(c.Labels, "tag", r.TagName)
	case "push":
		branch, ok := strings.CutPrefix(p.Ref, "refs/heads/")
		if !ok || p.Deleted || p.Repository.DefaultBranch == "" || branch != p.Repository.DefaultBranch {
			return nil, false
		}
		c.Kind = "push"
		c.Title = "Push to " + repo + " " + branch + " (" + short(p.After) + ")"
		if p.HeadCommit != nil {
			c.Description = p.HeadCommit.Message
			c.OccurredAt = parseTime(p.HeadCommit.Timestamp)
			if first, _, _ := strings.Cut(p.HeadCommit.Message, "\n"); first != "" {
				c.Title += ": " + first
			}
		}
		c.URL, c.ExternalID = p.Compare, "github:push:"+p.After
		putLabel(c.Labels, "ref", p.Ref)
		putLabel(c.Labels, "sha", p.After)
	default:
		return nil, false
	}
	return c, true
}

type glChangePayload struct {
	ObjectKind   string `json:"object_kind"`
	Ref          string `json:"ref"`
	After        string `json:"after"`
	CheckoutSHA  string `json:"checkout_sha"`
	UserUsername string `json:"user_username"`
	User         struct {
		Username string `json:"username"`
	} `json:"user"`
	Project struct {
		Name              string `json:"name"`
		PathWithNamespace string `json:"path_with_namespace"`
		WebURL            string `json:"web_url"`
		DefaultBranch     string `json:"default_branch"`
	} `json:"project"`
	ObjectAttributes *struct {
		ID         text   `json:"id"`
		Ref        string `json:"ref"`
		Tag        bool   `json:"tag"`
		SHA        string `json:"sha"`
		Status     string `json:"status"`
		URL        string `json:"url"`
		FinishedAt string `json:"finished_at"`
	} `json:"object_attributes"`
	DeploymentID    text   `json:"deployment_id"`
	Status          string `json:"status"`
	Environment     text   `json:"environment"`
	DeployableURL   string `json:"deployable_url"`
	StatusChangedAt string `json:"status_changed_at"`
	ShortSHA        string `json:"short_sha"`
}

func gitlabChange(body []byte) (*Change, bool) {
	var p glChangePayload
	if json.Unmarshal(body, &p) != nil {
		return nil, false
	}
	proj := p.Project.PathWithNamespace
	c := &Change{Service: firstNonEmpty(p.Project.Name, proj), Author: firstNonEmpty(p.User.Username, p.UserUsername),
		Labels: map[string]string{"project": proj}}
	switch p.ObjectKind {
	case "deployment":
		if p.Status != "success" && p.Status != "failed" {
			return nil, false
		}
		c.Kind, c.Environment = "deploy", string(p.Environment)
		c.Title = "Deploy " + proj + "@" + p.ShortSHA + " to " + c.Environment + ": " + p.Status
		c.URL, c.ExternalID = p.DeployableURL, "gitlab:deployment:"+string(p.DeploymentID)+":"+p.Status
		c.OccurredAt = parseTime(p.StatusChangedAt)
		putLabel(c.Labels, "ref", p.Ref)
		putLabel(c.Labels, "status", p.Status)
	case "pipeline":
		a := p.ObjectAttributes
		if a == nil || a.Tag || p.Project.DefaultBranch == "" || a.Ref != p.Project.DefaultBranch ||
			(a.Status != "success" && a.Status != "failed") {
			return nil, false
		}
		c.Kind = "pipeline"
		c.Title = "Pipeline " + string(a.ID) + " on " + proj + " " + a.Ref + ": " + a.Status
		c.URL, c.ExternalID = a.URL, "gitlab:pipeline:"+string(a.ID)+":"+a.Status
		c.OccurredAt = parseTime(a.FinishedAt)
		putLabel(c.Labels, "ref", a.Ref)
		putLabel(c.Labels, "sha", a.SHA)
	case "tag_push":
		tag, ok := strings.CutPrefix(p.Ref, "refs/tags/")
		if !ok || strings.Trim(p.After, "0") == "" { // all zeros: the tag was deleted
			return nil, false
		}
		c.Kind = "tag"
		c.Title = "Tag " + tag + " on " + proj
		c.URL, c.ExternalID = p.Project.WebURL+"/-/tags/"+tag, "gitlab:tag:"+proj+":"+tag+":"+p.After
		putLabel(c.Labels, "tag", tag)
		putLabel(c.Labels, "sha", firstNonEmpty(p.CheckoutSHA, p.After))
	default:
		return nil, false
	}
	return c, true
}

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}
