package rag

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
)

// Query is one search. Text is matched against content, headings and titles; it may be empty only when
// Tags narrow the search. Collections (none: all) and Tags (every one must be present) filter. Limit is 1 to
// MaxLimit; 0 means 10.
type Query struct {
	Text        string
	Collections []string
	Tags        []string
	Limit       int
}

// Hit is one matching chunk, best first.
type Hit struct {
	Collection string
	Name       string
	// OrgWide is true for a document of the organization's _org folder rather than of the project.
	OrgWide bool
	Title   string
	// Headings is the path of Markdown headings above the chunk, outermost first; empty before the first.
	Headings []string
	Tags     []string
	Snippet  string
	Score    float64
}

const snippetBytes = 320

// Search returns the chunks of the scope's project and of its organization's _org folder that best match
// q. The org and project filters are exact keyword terms in the same query, so no other tenant's chunk can
// be scored, let alone returned. A scope with an empty ProjectID searches the org-wide documents only.
func (s *Store) Search(ctx context.Context, scope Scope, q Query) ([]Hit, error) {
	if err := s.await(ctx); err != nil {
		return nil, err
	}
	start := time.Now()
	if err := validateScope(scope); err != nil {
		return nil, err
	}
	req, err := s.searchRequest(scope, q)
	if err != nil {
		return nil, err
	}
	if s.closed.Load() {
		return nil, ErrClosed
	}
	var res *bleve.SearchResult
	err = recovered(func() (err error) { res, err = s.index.SearchInContext(ctx, req); return err })
	if err != nil {
		return nil, fmt.Errorf("rag: search: %w", err)
	}
	hits := make([]Hit, 0, len(res.Hits))
	terms := queryTerms(q.Text)
	for _, h := range res.Hits {
		f := h.Fields
		hit := Hit{Score: h.Score, Tags: stringList(f[fTags]), Headings: stringList(f[fHeading])}
		hit.Collection, _ = f[fCollection].(string)
		hit.Name, _ = f[fName].(string)
		hit.Title, _ = f[fTitle].(string)
		project, _ := f[fProject].(string)
		hit.OrgWide = project == orgFolder
		content, _ := f[fContent].(string)
		hit.Snippet = snippet(content, terms, snippetBytes)
		hits = append(hits, hit)
	}
	s.activity.record(scope, q.Text, len(hits), time.Since(start))
	return hits, nil
}

func (s *Store) searchRequest(scope Scope, q Query) (*bleve.SearchRequest, error) {
	text := strings.TrimSpace(q.Text)
	switch {
	case len(text) > maxQueryBytes:
		return nil, invalid(ErrInvalidQuery, "text", "longer than %d bytes", maxQueryBytes)
	case !utf8.ValidString(text):
		return nil, invalid(ErrInvalidQuery, "text", "not UTF-8")
	case text == "" && len(q.Tags) == 0:
		return nil, invalid(ErrInvalidQuery, "text", "empty")
	case q.Limit < 0 || q.Limit > MaxLimit:
		return nil, invalid(ErrInvalidQuery, "limit", "must be 1 to %d", MaxLimit)
	}
	limit := q.Limit
	if limit == 0 {
		limit = defaultLimit
	}
	for _, c := range q.Collections {
		if err := validateCollection(c); err != nil {
			return nil, err
		}
	}
	tags, err := normalizeTags(q.Tags)
	if err != nil {
		return nil, err
	}

	// org_id exists on chunks only, so manifest entries can never match.
	filters := []query.Query{term(fOrg, scope.OrgID)}
	if scope.ProjectID == "" {
		filters = append(filters, term(fProject, orgFolder))
	} else {
		filters = append(filters, bleve.NewDisjunctionQuery(term(fProject, scope.ProjectID), term(fProject, orgFolder)))
	}
	if len(q.Collections) > 0 {
		var cs []query.Query
		for _, c := range q.Collections {
			cs = append(cs, term(fCollection, c))
		}
		filters = append(filters, bleve.NewDisjunctionQuery(cs...))
	}
	for _, t := range tags {
		filters = append(filters, term(fTags, t))
	}
	// The filters join the text query in one conjunction rather than bleve's filter clause: that clause
	// post-filters every text match of the whole index, while a conjunction leapfrogs along the tenant's
	// short posting lists (several times faster with many tenants). Boost 0 keeps them out of the score.
	for _, f := range filters {
		f.(query.BoostableQuery).SetBoost(0)
	}
	var scored query.Query = bleve.NewMatchAllQuery()
	if text != "" {
		scored = bleve.NewDisjunctionQuery(match(fContent, text, 1), match(fContext, text, 2))
	}
	bq := bleve.NewConjunctionQuery(append([]query.Query{scored}, filters...)...)
	req := bleve.NewSearchRequestOptions(bq, limit, 0, false)
	req.Fields = []string{fCollection, fName, fTitle, fHeading, fTags, fProject, fContent}
	return req, nil
}

func term(field, value string) query.Query {
	t := bleve.NewTermQuery(value)
	t.SetField(field)
	return t
}

func match(field, text string, boost float64) query.Query {
	m := bleve.NewMatchQuery(text)
	m.SetField(field)
	m.SetBoost(boost)
	return m
}

// queryTerms are the lower-cased words of a query, used to centre snippets.
func queryTerms(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len(w) > 2 {
			out = append(out, w)
		}
	}
	return out
}

// snippet is a window of content of at most n bytes around the first occurrence of a query word (or its
// first five letters, to catch stemmed forms), cut at word boundaries. Highlighting through bleve costs
// several times the search itself, and a chunk is already a small section.
func snippet(content string, terms []string, n int) string {
	content = strings.Join(strings.Fields(content), " ")
	if len(content) <= n {
		return content
	}
	lower := strings.ToLower(content)
	at := -1
	for _, t := range terms {
		if len(t) > 5 {
			t = t[:5]
		}
		if i := strings.Index(lower, t); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	from := 0
	if at > n/3 {
		from = at - n/3
	}
	if from+n > len(content) {
		from = len(content) - n
	}
	for from > 0 && !utf8.RuneStart(content[from]) {
		from++
	}
	to := min(from+n, len(content))
	for to < len(content) && !utf8.RuneStart(content[to]) {
		to--
	}
	out := content[from:to]
	if from > 0 {
		if i := strings.IndexByte(out, ' '); i >= 0 && i < 20 {
			out = out[i+1:]
		}
		out = "…" + out
	}
	if to < len(content) {
		if i := strings.LastIndexByte(out, ' '); i > len(out)-20 && i > 0 {
			out = out[:i]
		}
		out += "…"
	}
	return out
}
