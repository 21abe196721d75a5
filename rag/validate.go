package rag

import (
	"bytes"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Collections a document may belong to. Memories are written by the server for the agent's long-term memory.
const (
	CollectionRunbooks  = "runbooks"
	CollectionFacts     = "facts"
	CollectionIncidents = "incidents"
	CollectionMemories  = "memories"
)

var collections = []string{CollectionRunbooks, CollectionFacts, CollectionIncidents, CollectionMemories}

// Collections lists every collection, in display order (a fresh slice the caller may keep).
func Collections() []string { return slices.Clone(collections) }

// orgFolder is the project folder of organization-wide documents. It cannot collide with a project id,
// because ids start with a letter or digit.
const orgFolder = "_org"

const (
	// DefaultMaxDocBytes caps one document (front matter included).
	DefaultMaxDocBytes = 1 << 20
	maxNameBytes       = 255
	maxNameSegments    = 4
	maxSegmentBytes    = 128
	maxTags            = 32
	maxTagBytes        = 64
	maxQueryBytes      = 1024
	// MaxLimit is the largest number of hits one search returns.
	MaxLimit     = 100
	defaultLimit = 10
)

var (
	idPattern  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)
	tagPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._:/-]*$`)
	textExts   = []string{".md", ".markdown", ".txt"}
)

// Scope says whose documents a call sees. OrgID is required. A ProjectID names one project of that
// organization; an empty ProjectID means the organization-wide documents.
type Scope struct {
	OrgID     string
	ProjectID string
}

// folder is the scope's directory below docs/.
func (s Scope) folder() string {
	if s.ProjectID == "" {
		return s.OrgID + "/" + orgFolder
	}
	return s.OrgID + "/" + s.ProjectID
}

// projectKey is the value of the project_id keyword field of the scope's chunks.
func (s Scope) projectKey() string {
	if s.ProjectID == "" {
		return orgFolder
	}
	return s.ProjectID
}

func validateScope(s Scope) error {
	if !idPattern.MatchString(s.OrgID) {
		return invalid(ErrInvalidScope, "org_id", "%q is not an id", s.OrgID)
	}
	if s.ProjectID != "" && !idPattern.MatchString(s.ProjectID) {
		return invalid(ErrInvalidScope, "project_id", "%q is not an id", s.ProjectID)
	}
	return nil
}

func validateCollection(c string) error {
	if !slices.Contains(collections, c) {
		return invalid(ErrUnknownCollection, "collection", "%q is not one of %s", c, strings.Join(collections, ", "))
	}
	return nil
}

// validateName accepts a relative slash path that stays inside its collection folder: no absolute path, no
// "." or ".." segment, no hidden segment (temporary files of atomic writes are hidden), no control
// characters or backslashes, and a text extension.
func validateName(name string) error {
	switch {
	case name == "":
		return invalid(ErrInvalidName, "name", "empty")
	case len(name) > maxNameBytes:
		return invalid(ErrInvalidName, "name", "longer than %d bytes", maxNameBytes)
	case !utf8.ValidString(name):
		return invalid(ErrInvalidName, "name", "not UTF-8")
	case strings.HasPrefix(name, "/"):
		return invalid(ErrInvalidName, "name", "absolute path")
	case strings.ContainsRune(name, '\\'):
		return invalid(ErrInvalidName, "name", "backslash")
	case strings.ContainsFunc(name, unicode.IsControl):
		return invalid(ErrInvalidName, "name", "control character")
	}
	segs := strings.Split(name, "/")
	if len(segs) > maxNameSegments {
		return invalid(ErrInvalidName, "name", "more than %d levels", maxNameSegments)
	}
	for _, seg := range segs {
		switch {
		case seg == "":
			return invalid(ErrInvalidName, "name", "empty path segment")
		case seg == "." || seg == "..":
			return invalid(ErrInvalidName, "name", "%q segment", seg)
		case strings.HasPrefix(seg, "."):
			return invalid(ErrInvalidName, "name", "hidden segment %q", seg)
		case len(seg) > maxSegmentBytes:
			return invalid(ErrInvalidName, "name", "segment longer than %d bytes", maxSegmentBytes)
		case strings.TrimSpace(seg) != seg:
			return invalid(ErrInvalidName, "name", "segment with leading or trailing space")
		}
	}
	if path.Clean(name) != name {
		return invalid(ErrInvalidName, "name", "not a clean path")
	}
	if !slices.Contains(textExts, path.Ext(name)) {
		return invalid(ErrInvalidName, "name", "extension must be one of %s", strings.Join(textExts, ", "))
	}
	return nil
}

// validateContent rejects what the index cannot treat as text: oversized files, invalid UTF-8, NUL bytes.
func validateContent(content []byte, max int) error {
	if len(content) > max {
		return invalid(ErrTooLarge, "content", "%d bytes, at most %d", len(content), max)
	}
	if !utf8.Valid(content) {
		return invalid(ErrNotText, "content", "invalid UTF-8")
	}
	if bytes.IndexByte(content, 0) >= 0 {
		return invalid(ErrNotText, "content", "NUL byte")
	}
	return nil
}

// normalizeTags lower-cases, de-duplicates and sorts tags, rejecting ones that would not survive a round
// trip through the front matter.
func normalizeTags(tags []string) ([]string, error) {
	if len(tags) > maxTags {
		return nil, invalid(ErrInvalidTags, "tags", "more than %d tags", maxTags)
	}
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		t = strings.ToLower(strings.TrimSpace(t))
		if len(t) > maxTagBytes || !tagPattern.MatchString(t) {
			return nil, invalid(ErrInvalidTags, "tags", "%q: lower-case letters, digits and ._:/- only, at most %d bytes", t, maxTagBytes)
		}
		out = append(out, t)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
