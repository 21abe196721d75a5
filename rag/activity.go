package rag

import (
	"slices"
	"sort"
	"sync"
	"time"
)

// ActivityWindow is how long search activity is remembered (in memory only: it restarts empty).
const ActivityWindow = 24 * time.Hour

const (
	maxEvents      = 200_000 // bound on memory: about 100 bytes an event
	maxLoggedText  = 200
	maxZeroQueries = 50
)

// Activity summarizes the searches of a trailing window.
type Activity struct {
	Since       time.Time
	Searches    int
	ZeroResults int
	// Latency percentiles of Search, from the call to the ranked snippets.
	P50, P95, P99 time.Duration
	// ZeroResultQueries are the texts that found nothing, most frequent first (at most 50): what the
	// knowledge base is missing.
	ZeroResultQueries []ZeroQuery
}

// ZeroQuery is one query text that returned no hit, with how often and when last.
type ZeroQuery struct {
	Text  string
	Count int
	Last  time.Time
}

type searchEvent struct {
	at      time.Time
	scope   Scope
	text    string // only kept for zero-result searches
	hits    int
	latency time.Duration
}

// activityLog keeps the search events of the last ActivityWindow in time order.
type activityLog struct {
	now    func() time.Time
	mu     sync.Mutex
	events []searchEvent
}

func newActivityLog(now func() time.Time) *activityLog { return &activityLog{now: now} }

func (a *activityLog) record(scope Scope, text string, hits int, latency time.Duration) {
	ev := searchEvent{at: a.now(), scope: scope, hits: hits, latency: latency}
	if hits == 0 {
		if len(text) > maxLoggedText {
			text = text[:maxLoggedText]
		}
		ev.text = text
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pruneLocked(ev.at.Add(-ActivityWindow))
	if len(a.events) >= maxEvents {
		a.events = slices.Delete(a.events, 0, len(a.events)-maxEvents+1)
	}
	a.events = append(a.events, ev)
}

func (a *activityLog) pruneLocked(cutoff time.Time) {
	i := sort.Search(len(a.events), func(i int) bool { return !a.events[i].at.Before(cutoff) })
	if i > 0 {
		a.events = slices.Delete(a.events, 0, i)
	}
}

// Activity reports the searches since the given time (clamped to the last 24 hours) made in scope: the zero
// Scope means every search, a Scope with only OrgID the searches of all that organization's projects, a full
// Scope one project's. Zero-result texts are tenant data, so the server passes the caller's scope.
func (s *Store) Activity(scope Scope, since time.Time) Activity {
	a := s.activity
	now := a.now()
	if floor := now.Add(-ActivityWindow); since.Before(floor) {
		since = floor
	}
	out := Activity{Since: since}
	var lat []time.Duration
	zero := map[string]*ZeroQuery{}
	a.mu.Lock()
	a.pruneLocked(now.Add(-ActivityWindow))
	for _, ev := range a.events {
		if ev.at.Before(since) || !scopeCovers(scope, ev.scope) {
			continue
		}
		out.Searches++
		lat = append(lat, ev.latency)
		if ev.hits == 0 {
			out.ZeroResults++
			z := zero[ev.text]
			if z == nil {
				z = &ZeroQuery{Text: ev.text}
				zero[ev.text] = z
			}
			z.Count++
			z.Last = ev.at
		}
	}
	a.mu.Unlock()
	slices.Sort(lat)
	out.P50, out.P95, out.P99 = percentile(lat, 50), percentile(lat, 95), percentile(lat, 99)
	for _, z := range zero {
		out.ZeroResultQueries = append(out.ZeroResultQueries, *z)
	}
	slices.SortFunc(out.ZeroResultQueries, func(x, y ZeroQuery) int {
		if x.Count != y.Count {
			return y.Count - x.Count
		}
		return y.Last.Compare(x.Last)
	})
	if len(out.ZeroResultQueries) > maxZeroQueries {
		out.ZeroResultQueries = out.ZeroResultQueries[:maxZeroQueries]
	}
	return out
}

// scopeCovers reports whether filter (zero: all; org only: the whole org) includes s.
func scopeCovers(filter, s Scope) bool {
	if filter.OrgID == "" {
		return true
	}
	if filter.OrgID != s.OrgID {
		return false
	}
	return filter.ProjectID == "" || filter.ProjectID == s.ProjectID
}

// percentile of sorted values by the nearest-rank method.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100
	return sorted[max(rank, 1)-1]
}

// forgetOrg drops an erased organization's search events (their zero-result texts are its data).
func (a *activityLog) forgetOrg(orgID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.events = slices.DeleteFunc(a.events, func(ev searchEvent) bool { return ev.scope.OrgID == orgID })
}
