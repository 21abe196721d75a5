package rag

import (
	"strconv"
	"strings"

	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/mapping"
)

// Field names of the index. Two kinds of documents share it: chunks (searched) and manifest entries (one per
// file, read at start to know what the index holds, never searched).
const (
	kindChunk    = "chunk"
	kindManifest = "manifest"

	fKind       = "kind"
	fOrg        = "org_id"
	fProject    = "project_id"
	fCollection = "collection"
	fName       = "name"
	fTags       = "tags"
	fTitle      = "title"
	fHeading    = "heading"
	fContext    = "context"
	fContent    = "content"
	fPath       = "path"
	fSize       = "size"
	fModTime    = "mtime_ns"
	fHash       = "sha256"
	fChunks     = "chunks"
	fIndexedAt  = "indexed_ns"
)

// indexSchema names the mapping and chunking rules; an index built under another one is rebuilt.
const indexSchema = "opsagent-rag/3"

// newMapping is explicit: no dynamic mapping, text fields analyzed in English, scoping fields as keywords
// (exact terms, so tenancy filters cannot match by accident), manifest fields stored but not indexed.
func newMapping() mapping.IndexMapping {
	keywordField := func(store bool) *mapping.FieldMapping {
		f := mapping.NewKeywordFieldMapping()
		f.Analyzer = keyword.Name
		f.Store = store
		f.IncludeInAll = false
		f.DocValues = false
		return f
	}
	textField := func() *mapping.FieldMapping {
		f := mapping.NewTextFieldMapping()
		f.Analyzer = en.AnalyzerName
		f.Store = true
		f.IncludeTermVectors = false
		f.IncludeInAll = false
		f.DocValues = false
		return f
	}
	storedOnly := func(f *mapping.FieldMapping) *mapping.FieldMapping {
		f.Index = false
		f.Store = true
		f.IncludeInAll = false
		f.DocValues = false
		return f
	}

	chunk := mapping.NewDocumentStaticMapping()
	chunk.AddFieldMappingsAt(fKind, keywordField(false))
	chunk.AddFieldMappingsAt(fOrg, keywordField(false))
	chunk.AddFieldMappingsAt(fProject, keywordField(true))
	chunk.AddFieldMappingsAt(fCollection, keywordField(true))
	chunk.AddFieldMappingsAt(fTags, keywordField(true))
	chunk.AddFieldMappingsAt(fName, keywordField(true))
	// Title and heading path are searched as one field (fewer term readers per query) and stored apart.
	chunk.AddFieldMappingsAt(fTitle, storedOnly(mapping.NewTextFieldMapping()))
	chunk.AddFieldMappingsAt(fHeading, storedOnly(mapping.NewTextFieldMapping()))
	context := textField()
	context.Store = false
	chunk.AddFieldMappingsAt(fContext, context)
	chunk.AddFieldMappingsAt(fContent, textField())

	manifest := mapping.NewDocumentStaticMapping()
	manifest.AddFieldMappingsAt(fKind, keywordField(false))
	manifest.AddFieldMappingsAt(fPath, storedOnly(mapping.NewKeywordFieldMapping()))
	manifest.AddFieldMappingsAt(fHash, storedOnly(mapping.NewKeywordFieldMapping()))
	manifest.AddFieldMappingsAt(fTitle, storedOnly(mapping.NewKeywordFieldMapping()))
	manifest.AddFieldMappingsAt(fTags, storedOnly(mapping.NewKeywordFieldMapping()))
	manifest.AddFieldMappingsAt(fSize, storedOnly(mapping.NewNumericFieldMapping()))
	manifest.AddFieldMappingsAt(fModTime, storedOnly(mapping.NewKeywordFieldMapping()))
	manifest.AddFieldMappingsAt(fIndexedAt, storedOnly(mapping.NewKeywordFieldMapping()))
	manifest.AddFieldMappingsAt(fChunks, storedOnly(mapping.NewNumericFieldMapping()))

	// No "_all" composite field: every search names its fields, and building it costs indexing time.
	chunk.AddSubDocumentMapping("_all", mapping.NewDocumentDisabledMapping())
	manifest.AddSubDocumentMapping("_all", mapping.NewDocumentDisabledMapping())

	im := mapping.NewIndexMapping()
	im.TypeField = fKind
	im.DefaultType = "unknown"
	im.DefaultMapping = mapping.NewDocumentDisabledMapping()
	im.AddDocumentMapping(kindChunk, chunk)
	im.AddDocumentMapping(kindManifest, manifest)
	im.DefaultAnalyzer = en.AnalyzerName
	im.DefaultField = fContent
	im.StoreDynamic = false
	im.IndexDynamic = false
	im.DocValuesDynamic = false
	return im
}

// entry is the manifest record of one indexed file. Path is docs-relative: org/project/collection/name.
type entry struct {
	Path      string
	Size      int64
	ModTime   int64 // UnixNano
	Hash      string
	Title     string
	Tags      []string
	Chunks    int
	IndexedAt int64 // UnixNano
}

func manifestID(p string) string     { return "m:" + p }
func chunkID(p string, i int) string { return "c:" + p + "#" + strconv.Itoa(i) }
func (e entry) fields() map[string]any {
	return map[string]any{
		fKind:      kindManifest,
		fPath:      e.Path,
		fSize:      float64(e.Size),
		fModTime:   strconv.FormatInt(e.ModTime, 10),
		fHash:      e.Hash,
		fTitle:     e.Title,
		fTags:      e.Tags,
		fChunks:    float64(e.Chunks),
		fIndexedAt: strconv.FormatInt(e.IndexedAt, 10),
	}
}

// entryFromFields rebuilds a manifest entry from stored fields as bleve returns them (numbers as float64,
// a single-valued list as a plain string).
func entryFromFields(f map[string]any) (entry, bool) {
	var e entry
	var ok bool
	if e.Path, ok = f[fPath].(string); !ok {
		return e, false
	}
	e.Hash, _ = f[fHash].(string)
	e.Title, _ = f[fTitle].(string)
	e.Tags = stringList(f[fTags])
	if v, ok := f[fSize].(float64); ok {
		e.Size = int64(v)
	}
	if v, ok := f[fChunks].(float64); ok {
		e.Chunks = int(v)
	}
	if s, ok := f[fModTime].(string); ok {
		e.ModTime, _ = strconv.ParseInt(s, 10, 64)
	}
	if s, ok := f[fIndexedAt].(string); ok {
		e.IndexedAt, _ = strconv.ParseInt(s, 10, 64)
	}
	return e, true
}

// location splits a manifest path into its scope, collection and name.
func location(p string) (s Scope, collection, name string, ok bool) {
	parts := strings.SplitN(p, "/", 4)
	if len(parts) != 4 {
		return s, "", "", false
	}
	s = Scope{OrgID: parts[0], ProjectID: parts[1]}
	if s.ProjectID == orgFolder {
		s.ProjectID = ""
	}
	return s, parts[2], parts[3], true
}

func chunkFields(s Scope, collection, name, title string, tags []string, c chunk) map[string]any {
	return map[string]any{
		fKind:       kindChunk,
		fOrg:        s.OrgID,
		fProject:    s.projectKey(),
		fCollection: collection,
		fName:       name,
		fTags:       tags,
		fTitle:      title,
		fHeading:    c.Headings,
		fContext:    title + "\n" + strings.Join(c.Headings, "\n"),
		fContent:    c.Text,
	}
}

func stringList(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		out := make([]string, 0, len(t))
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
