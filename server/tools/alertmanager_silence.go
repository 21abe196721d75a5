package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm"
)

// Silence limits.
const (
	maxSilence         = 7 * 24 * time.Hour
	maxSilenceMatchers = 20
)

// Silence is alertmanager_create_silence or alertmanager_expire_silence:
// the agent proposes to quiet alerts (or end a silence) through the
// Alertmanager v2 API. It changes what pages people, so it is not
// read-only: the policy sends every call to a person unless a rule says
// otherwise.
type Silence struct {
	Expire bool // expire (DELETE /api/v2/silence/{id}) instead of create
	QueryDeps
}

// AlertmanagerSilenceTools are the change-capable Alertmanager tools.
func AlertmanagerSilenceTools(d QueryDeps) []*Silence {
	return []*Silence{{QueryDeps: d}, {Expire: true, QueryDeps: d}}
}

var silenceID = regexp.MustCompile(`^[A-Za-z0-9-]{1,64}$`)

// Spec describes the tool to the model.
func (s *Silence) Spec() llm.ToolSpec {
	integ := str("name of the alertmanager integration; may be omitted when the project has only one", "maxLength", 120)
	if s.Expire {
		return llm.ToolSpec{Name: "alertmanager_expire_silence", Description: "Expire (end now) an Alertmanager silence by its id " +
			"(see alertmanager_silences). Changes what pages people: a person approves it.",
			Parameters: schema(map[string]any{"integration": integ, "silence_id": str("the silence id", "maxLength", 64)}, "silence_id")}
	}
	matcher := map[string]any{"type": "object", "additionalProperties": false, "required": []string{"name", "value"}, "properties": map[string]any{
		"name": str("label name", "maxLength", 128), "value": str("label value (or RE2 when is_regex)", "maxLength", 512),
		"is_regex": map[string]any{"type": "boolean"}, "is_equal": map[string]any{"type": "boolean", "description": "false negates (default true)"}}}
	return llm.ToolSpec{Name: "alertmanager_create_silence", Description: "Create an Alertmanager silence for alerts matching every matcher, " +
		"starting now, for a duration (at most 7d), with a comment saying why. Changes what pages people: a person approves it.",
		Parameters: schema(map[string]any{"integration": integ, "duration": durationProp, "comment": str("why", "minLength", 1, "maxLength", 1000),
			"matchers": map[string]any{"type": "array", "minItems": 1, "maxItems": maxSilenceMatchers, "items": matcher}}, "matchers", "duration", "comment")}
}

// ReadOnly is false: a silence changes who is paged.
func (s *Silence) ReadOnly() bool { return false }

type silenceArgs struct {
	Integration string `json:"integration"`
	SilenceID   string `json:"silence_id"`
	Duration    string `json:"duration"`
	Comment     string `json:"comment"`
	Matchers    []struct {
		Name    string `json:"name"`
		Value   string `json:"value"`
		IsRegex bool   `json:"is_regex"`
		IsEqual *bool  `json:"is_equal"`
	} `json:"matchers"`
}

// parse validates the arguments; the silence's body is built from them.
func (s *Silence) parse(args json.RawMessage) (silenceArgs, time.Duration, error) {
	var a silenceArgs
	if err := decode(args, &a); err != nil {
		return a, 0, err
	}
	if s.Expire {
		if !silenceID.MatchString(a.SilenceID) {
			return a, 0, fmt.Errorf("silence_id must be an Alertmanager silence id")
		}
		return a, 0, nil
	}
	d, err := argDuration(map[string]any{"duration": a.Duration}, "duration", 0)
	if err != nil || d == 0 || d > maxSilence {
		return a, 0, fmt.Errorf("duration must be a positive duration of at most 7d, such as 2h")
	}
	if len(a.Matchers) == 0 || len(a.Matchers) > maxSilenceMatchers || strings.TrimSpace(a.Comment) == "" {
		return a, 0, fmt.Errorf("a silence needs 1 to %d matchers and a comment", maxSilenceMatchers)
	}
	for _, m := range a.Matchers {
		if m.Name == "" {
			return a, 0, fmt.Errorf("every matcher names a label")
		}
		if m.IsRegex {
			if _, err := regexp.Compile(m.Value); err != nil {
				return a, 0, fmt.Errorf("matcher %s: %v", m.Name, err)
			}
		}
	}
	return a, d, nil
}

// Render is what the approver sees: the exact API call.
func (s *Silence) Render(args json.RawMessage) (Rendered, error) {
	a, d, err := s.parse(args)
	if err != nil {
		return Rendered{}, err
	}
	target := "alertmanager:" + a.Integration
	if s.Expire {
		return Rendered{Target: target, Command: "DELETE /api/v2/silence/" + a.SilenceID}, nil
	}
	ms := make([]string, len(a.Matchers))
	for i, m := range a.Matchers {
		ms[i] = matcherString(m.Name, m.Value, m.IsRegex, m.IsEqual)
	}
	return Rendered{Target: target, Command: fmt.Sprintf("POST /api/v2/silences {%s} for %s: %s", strings.Join(ms, ", "), d, oneLine(a.Comment))}, nil
}

// Run calls the Alertmanager v2 API.
func (s *Silence) Run(ctx context.Context, args json.RawMessage) (string, error) {
	a, d, err := s.parse(args)
	if err != nil {
		return "", err
	}
	ep, err := s.Endpoints(ctx, "alertmanager", a.Integration)
	if err != nil {
		return "", err
	}
	now := time.Now().UTC()
	if s.Now != nil {
		now = s.Now()
	}
	method, path, body := http.MethodDelete, "/api/v2/silence/"+url.PathEscape(a.SilenceID), []byte(nil)
	if !s.Expire {
		type amMatcher struct {
			Name    string `json:"name"`
			Value   string `json:"value"`
			IsRegex bool   `json:"isRegex"`
			IsEqual bool   `json:"isEqual"`
		}
		ms := make([]amMatcher, len(a.Matchers))
		for i, m := range a.Matchers {
			ms[i] = amMatcher{Name: m.Name, Value: m.Value, IsRegex: m.IsRegex, IsEqual: m.IsEqual == nil || *m.IsEqual}
		}
		body, _ = json.Marshal(map[string]any{"matchers": ms, "startsAt": now.Format(time.RFC3339), "endsAt": now.Add(d).Format(time.RFC3339),
			"createdBy": "opsagent", "comment": a.Comment})
		method, path = http.MethodPost, "/api/v2/silences"
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(ep.BaseURL, "/")+path, bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("integration %s has a bad URL", ep.Name)
	}
	for k, vs := range ep.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.Egress.Client(30 * time.Second).Do(req)
	if err != nil {
		return "", fmt.Errorf("alertmanager %s unreachable: %v", ep.Name, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("alertmanager %s answered %s: %s", ep.Name, resp.Status, oneLine(string(out[:min(len(out), 2000)])))
	}
	if s.Expire {
		return fmt.Sprintf("alertmanager %s: silence %s expired", ep.Name, a.SilenceID), nil
	}
	var created struct {
		SilenceID string `json:"silenceID"`
	}
	_ = json.Unmarshal(out, &created)
	return fmt.Sprintf("alertmanager %s: silence %s created until %s", ep.Name, created.SilenceID, now.Add(d).Format(time.RFC3339)), nil
}
