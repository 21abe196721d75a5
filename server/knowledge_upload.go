package server

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/opsagent/opsagent/rag"
)

// bindDocumentCreate reads POST /api/knowledge/documents: a JSON DocumentCreate, or multipart/form-data
// with the same fields as form fields (tags comma-separated) and the document as the file part "file".
func bindDocumentCreate(c *Ctx) (*DocumentCreate, error) {
	var req DocumentCreate
	mt, _, _ := mime.ParseMediaType(c.R.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		if err := c.Bind(&req); err != nil {
			return nil, err
		}
		return &req, nil
	}
	mr, err := c.R.MultipartReader()
	if err != nil {
		return nil, invalid("Malformed multipart body", "value_error", "body")
	}
	sawFile := false
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, maxBytesOr(err, invalid("Malformed multipart body", "value_error", "body"))
		}
		limit := int64(4 << 10) // form fields are short
		if part.FormName() == "file" {
			limit = rag.DefaultMaxDocBytes
		}
		data, err := io.ReadAll(io.LimitReader(part, limit+1))
		if err != nil {
			return nil, maxBytesOr(err, err)
		}
		if int64(len(data)) > limit {
			if part.FormName() == "file" {
				return nil, &http.MaxBytesError{Limit: limit}
			}
			return nil, invalid("Form field too long", "string_too_long", "body", part.FormName())
		}
		switch part.FormName() {
		case "file":
			req.Content, sawFile = string(data), true
			if req.Name == "" {
				req.Name = part.FileName()
			}
		case "collection":
			req.Collection = string(data)
		case "name":
			req.Name = string(data)
		case "scope":
			req.Scope = string(data)
		case "tags":
			req.Tags = splitList(string(data))
		}
	}
	switch {
	case !sawFile:
		return nil, invalid("Field required", "missing", "body", "file")
	case req.Collection == "":
		return nil, invalid("Field required", "missing", "body", "collection")
	case !slices.Contains([]string{rag.CollectionRunbooks, rag.CollectionFacts, rag.CollectionIncidents}, req.Collection):
		return nil, invalid("Input should be 'runbooks', 'facts' or 'incidents'", "enum", "body", "collection")
	case req.Name == "":
		return nil, invalid("Field required", "missing", "body", "name")
	case req.Scope != "" && req.Scope != "project" && req.Scope != "org":
		return nil, invalid("Input should be 'project' or 'org'", "enum", "body", "scope")
	}
	req.Name = strings.TrimSpace(req.Name)
	return &req, nil
}

func maxBytesOr(err, other error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return mbe
	}
	return other
}
