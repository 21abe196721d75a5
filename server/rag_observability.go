package server

import (
	"time"

	"github.com/opsagent/opsagent/rag"
)

// RAGObservabilityQuery is the trailing window of search activity.
type RAGObservabilityQuery struct {
	Hours int `query:"hours" default:"24" validate:"gte=1,lte=24"`
}

// RAGIndexOut is the live state of the index as the caller's org sees it.
type RAGIndexOut struct {
	Documents        int            `json:"documents"`
	OrgWideDocuments int            `json:"org_wide_documents"`
	Chunks           int            `json:"chunks"`
	ByCollection     map[string]int `json:"by_collection"`
	// SizeBytes is the index size on disk (one index serves every tenant).
	SizeBytes   int64      `json:"size_bytes"`
	LastIndexed *time.Time `json:"last_indexed"`
	// Pending counts changed files a running sync has not indexed yet.
	Pending int `json:"pending"`
}

// RAGZeroQueryOut is a query text that found nothing.
type RAGZeroQueryOut struct {
	Text  string    `json:"text"`
	Count int       `json:"count"`
	Last  time.Time `json:"last"`
}

// RAGSearchActivityOut summarizes the org's searches over the window.
type RAGSearchActivityOut struct {
	Since             time.Time         `json:"since"`
	Searches          int               `json:"searches"`
	ZeroResults       int               `json:"zero_results"`
	LatencyP50Ms      float64           `json:"latency_p50_ms"`
	LatencyP95Ms      float64           `json:"latency_p95_ms"`
	LatencyP99Ms      float64           `json:"latency_p99_ms"`
	ZeroResultQueries []RAGZeroQueryOut `json:"zero_result_queries"`
}

// RAGObservabilityOut is GET /api/observability/rag.
type RAGObservabilityOut struct {
	Hours  int                  `json:"hours"`
	Index  RAGIndexOut          `json:"index"`
	Search RAGSearchActivityOut `json:"search"`
}

func (s *Server) ragObservabilityRoutes() []*Route {
	return []*Route{
		{Method: "GET", Path: "/api/observability/rag", Summary: "Live RAG index state and search activity of the current org over the trailing hours", Tags: []string{"observability"}, Auth: AuthAny, Perm: PermKnowledgeRead, Query: RAGObservabilityQuery{}, Resp: RAGObservabilityOut{}, Status: 200, Handle: s.handleRAGObservability},
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// handleRAGObservability is GET /api/observability/rag.
func (s *Server) handleRAGObservability(c *Ctx) error {
	var q RAGObservabilityQuery
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	scope := rag.Scope{OrgID: c.OrgID()}
	st := s.rag.Stats(scope)
	out := RAGObservabilityOut{Hours: q.Hours, Index: RAGIndexOut{Documents: st.Documents, OrgWideDocuments: st.OrgWideDocuments,
		Chunks: st.Chunks, ByCollection: st.ByCollection, SizeBytes: st.IndexBytes, Pending: st.Pending}}
	if !st.LastIndexed.IsZero() {
		t := st.LastIndexed
		out.Index.LastIndexed = &t
	}
	// The activity log keeps its own clock; the window is measured against the real time.
	act := s.rag.Activity(scope, time.Now().Add(-time.Duration(q.Hours)*time.Hour))
	out.Search = RAGSearchActivityOut{Since: act.Since, Searches: act.Searches, ZeroResults: act.ZeroResults,
		LatencyP50Ms: ms(act.P50), LatencyP95Ms: ms(act.P95), LatencyP99Ms: ms(act.P99), ZeroResultQueries: []RAGZeroQueryOut{}}
	for _, z := range act.ZeroResultQueries {
		out.Search.ZeroResultQueries = append(out.Search.ZeroResultQueries, RAGZeroQueryOut{Text: z.Text, Count: z.Count, Last: z.Last})
	}
	return c.JSON(200, out)
}
