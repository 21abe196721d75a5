package postmortem

import (
	"strings"
	"testing"
	"time"
)

func sheet() *Sheet {
	s := &Sheet{IncidentID: "01900000-0000-7000-8000-000000000001", Title: "API down"}
	at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	s.Add("incident:01900000-0000-7000-8000-000000000001", at, "incident", "opened")
	s.Add("session:01900000-0000-7000-8000-000000000002#4", at.Add(time.Minute), "command", "systemctl restart api")
	return s
}

func TestVerifyKeepsRealCitationsOnly(t *testing.T) {
	s := sheet()
	md := "## Summary\n\nThe API was down [incident:01900000-0000-7000-8000-000000000001].\n\n## Timeline\n\n" +
		"- 10:01 restarted [session:01900000-0000-7000-8000-000000000002#4]\n- 10:02 fixed by magic [approval:01900000-0000-7000-8000-00000000dead]\n" +
		"- 10:03 nothing cited\n- also [made:up]\n"
	r := Verify(md, s, DefaultTemplate)
	if len(r.Cited) != 2 || len(r.Invalid) != 2 || r.Invalid[0] != "approval:01900000-0000-7000-8000-00000000dead" {
		t.Fatalf("cited %v invalid %v", r.Cited, r.Invalid)
	}
	if strings.Contains(r.Markdown, "dead]") || !strings.Contains(r.Markdown, "[unverified citation removed]") {
		t.Fatalf("invented citation kept:\n%s", r.Markdown)
	}
	if r.Uncited != 3 || !strings.Contains(r.Markdown, "## Action items\n\nNot drafted") {
		t.Fatalf("uncited %d:\n%s", r.Uncited, r.Markdown)
	}
	if !strings.Contains(s.Text(), "[session:01900000-0000-7000-8000-000000000002#4] 2026-11-25T10:01:00Z command: systemctl restart api") {
		t.Fatalf("sheet:\n%s", s.Text())
	}
}

func TestFallbackCitesEveryTimedFact(t *testing.T) {
	s := sheet()
	r := Verify(Fallback(s, DefaultTemplate), s, DefaultTemplate)
	if len(r.Invalid) != 0 || len(r.Cited) != 2 || r.Uncited != 0 {
		t.Fatalf("fallback: %+v", r)
	}
}
