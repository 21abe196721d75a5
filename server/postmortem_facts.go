package server

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/postmortem"
	"github.com/opsagent/opsagent/store"
)

// factSheet turns an incident's records into the labelled facts a draft
// may cite: the incident, its timeline, the alerts, each run's commands,
// outputs, messages and chat, and the approvals with who decided when.
// It is deterministic: the same records give the same sheet.
func factSheet(r *store.IncidentRecords) *postmortem.Sheet {
	inc := r.Incident
	who := func(id string) string {
		if id == "" {
			return "the platform"
		}
		if e := r.People[id]; e != "" {
			return e
		}
		return "user " + id
	}
	s := &postmortem.Sheet{IncidentID: inc.ID, Title: inc.Title}
	ref := "incident:" + inc.ID
	s.Add(ref, inc.OpenedAt, "incident", fmt.Sprintf("opened: %s (severity %s, source %s, %d alert(s) in %d deliveries)",
		inc.Title, inc.Severity, inc.Provider, inc.AlertCount, inc.EventCount))
	if inc.AcknowledgedAt != nil {
		s.Add(ref, *inc.AcknowledgedAt, "incident", "acknowledged by "+who(inc.AcknowledgedBy))
	}
	if inc.ResolvedAt != nil {
		s.Add(ref, *inc.ResolvedAt, "incident", fmt.Sprintf("resolved by %s after %s; summary given: %q", who(inc.ResolvedBy),
			inc.ResolvedAt.Sub(inc.OpenedAt).Round(1e9), inc.Summary))
	}
	for _, e := range r.Timeline {
		s.Add("timeline:"+e.ID, e.At, "timeline "+e.Kind, who(e.Actor)+": "+e.Text)
	}
	for _, e := range r.Events {
		s.Add("event:"+e.ID, e.At, "alert", fmt.Sprintf("%s %s delivery: %s", e.Provider, e.Type, alertTitles(e.Alerts)))
	}
	for _, ss := range r.Sessions {
		sref := "session:" + ss.ID
		s.Add(sref, ss.CreatedAt, "run", fmt.Sprintf("agent run, status %s; asked: %s", ss.Status, ss.FirstPrompt))
		for _, ev := range ss.Events {
			evRef := fmt.Sprintf("%s#%d", sref, ev.Seq)
			switch ev.Type {
			case string(agent.EventToolCall):
				var d agent.ToolCallEvent
				_ = json.Unmarshal([]byte(ev.Data), &d)
				s.Add(evRef, ev.CreatedAt, "command", d.Name+" "+string(d.Arguments))
			case string(agent.EventToolResult):
				var d agent.ToolResultEvent
				_ = json.Unmarshal([]byte(ev.Data), &d)
				state := "output"
				if d.Blocked {
					state = "refused"
				} else if d.IsError {
					state = "error"
				}
				s.Add(evRef, ev.CreatedAt, "command "+state, d.Name+": "+d.Output)
			case string(agent.EventMessage):
				var d agent.MessageEvent
				_ = json.Unmarshal([]byte(ev.Data), &d)
				if strings.TrimSpace(d.Content) != "" {
					s.Add(evRef, ev.CreatedAt, "agent message", d.Content)
				}
			case string(agent.EventApprovalRequired):
				var d agent.ApprovalRequired
				_ = json.Unmarshal([]byte(ev.Data), &d)
				s.Add(evRef, ev.CreatedAt, "approval requested", d.Name+" "+string(d.Arguments)+": "+d.Reason)
			}
		}
		// Chat after the first prompt lives in the transcript only.
		var msgs []llm.Message
		_ = json.Unmarshal([]byte(ss.Transcript), &msgs)
		first := true
		for _, m := range msgs {
			if m.Role != llm.RoleUser {
				continue
			}
			if first {
				first = false
				continue
			}
			s.Add(sref, ss.CreatedAt, "chat", "a person wrote: "+m.Content)
		}
	}
	for _, a := range r.Approvals {
		at, text := a.CreatedAt, fmt.Sprintf("%s: %s", a.Title, a.Status)
		if a.DecidedAt != nil {
			at = *a.DecidedAt
			text += fmt.Sprintf(" by %s at %s", who(a.DecidedBy), a.DecidedAt.Format("2006-01-02T15:04:05Z"))
		}
		if a.Comment != "" {
			text += "; comment: " + a.Comment
		}
		s.Add("approval:"+a.ID, at, "approval", text)
	}
	s.Sort()
	return s
}
