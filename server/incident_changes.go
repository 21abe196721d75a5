package server

import (
	"context"
	"encoding/json"
	"sort"
	"time"

	"github.com/opsagent/opsagent/store"
)

// ChangeLookback is how far before an incident opened its timeline (and
// its evidence pack) looks for changes.
const ChangeLookback = time.Hour

// incidentChanges are the project's changes from ChangeLookback before the
// incident opened until it was resolved (or now), oldest first, at most 50.
func (s *Server) incidentChanges(ctx context.Context, inc *store.Incident) ([]store.Change, error) {
	since := inc.OpenedAt.Add(-ChangeLookback)
	until := s.Now().Add(time.Second)
	if inc.ResolvedAt != nil {
		until = *inc.ResolvedAt
	}
	cs, _, err := s.db.ListChanges(ctx, store.ChangeFilter{OrgID: inc.OrgID, ProjectID: inc.ProjectID, Since: &since, Until: &until, Limit: 50})
	if err != nil {
		return nil, err
	}
	for i, j := 0, len(cs)-1; i < j; i, j = i+1, j-1 {
		cs[i], cs[j] = cs[j], cs[i]
	}
	return cs, nil
}

// withChangeEntries places the incident's changes on its timeline as
// entries of kind "change" (read-time: a change belongs to the project,
// and every incident it preceded shows it).
func withChangeEntries(tl []TimelineEntryOut, cs []store.Change) []TimelineEntryOut {
	if len(cs) == 0 {
		return tl
	}
	for i := range cs {
		c := &cs[i]
		data, _ := json.Marshal(changeOut(c))
		tl = append(tl, TimelineEntryOut{ID: c.ID, At: c.OccurredAt, Kind: "change", Text: c.Source + " " + c.Kind + ": " + c.Title, Data: data})
	}
	sort.SliceStable(tl, func(a, b int) bool { return tl[a].At.Before(tl[b].At) })
	return tl
}

// decorateIncident adds what the investigator knows to an incident read:
// the changes around it on its timeline and its latest finding.
func (s *Server) decorateIncident(ctx context.Context, inc *store.Incident, out *IncidentDetailOut) error {
	cs, err := s.incidentChanges(ctx, inc)
	if err != nil {
		return err
	}
	out.Timeline = withChangeEntries(out.Timeline, cs)
	f, err := s.db.LatestFinding(ctx, inc.OrgID, inc.ProjectID, inc.ID)
	switch {
	case err == nil:
		fo := findingOut(f)
		out.LatestFinding = &fo
	case !store.IsNotFound(err):
		return err
	}
	return nil
}
