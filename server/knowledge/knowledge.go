// Package knowledge is what the agent knows about a team: its long-term
// memories (rows of the database) and the documents of the RAG store (files on
// the appliance, rows on a PostgreSQL cluster: see Source). Every memory
// is also written to the RAG "memories" collection, in the same write
// transaction as its row, so one search finds runbooks, facts, incidents and
// memories together. The agent's remember, recall and search_knowledge tools
// call this package; the HTTP routes call it too.
package knowledge

import (
	"context"
	"errors"
	"regexp"
	"strings"

	"github.com/opsagent/opsagent/rag"
	"github.com/opsagent/opsagent/store"
)

// Base joins the memory rows and the RAG store.
type Base struct {
	db  *store.DB
	rag *rag.Store
}

// New returns a Base over db and the opened RAG store.
func New(db *store.DB, kb *rag.Store) *Base { return &Base{db: db, rag: kb} }

// Limits of a memory.
const (
	MaxKeyLen   = 120
	MaxTitleLen = 200
	MaxTextLen  = 64 << 10
)

// KeyPattern is what a memory key looks like: short, stable, chosen by the agent ("db-primary-host").
var KeyPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/-]{0,119}$`)

// Memory is a saved memory.
type Memory = store.Memory

// RememberInput saves a memory. Scope is "project" (default) or "org" (shared by the org's projects).
type RememberInput struct {
	OrgID, ProjectID string
	Scope            string
	Key              string
	Title            string
	Text             string
	Tags             []string
	SessionID        string // the agent session it came from, if any
	ActorID          string // the user on whose behalf it is saved, if any
}

// Remember saves a memory, updating the one of the same scope and key if it exists (created reports which).
func (b *Base) Remember(ctx context.Context, in RememberInput) (m *Memory, created bool, err error) {
	if in.Scope == "" {
		in.Scope = store.MemoryScopeProject
	}
	if err := validate(in.Scope, in.Key, in.Title, in.Text); err != nil {
		return nil, false, err
	}
	m = &Memory{OrgID: in.OrgID, ProjectID: in.ProjectID, Scope: in.Scope, Key: in.Key, Title: oneLine(in.Title),
		Text: in.Text, Tags: in.Tags, SourceSessionID: in.SessionID, CreatedBy: in.ActorID}
	if in.Scope == store.MemoryScopeOrg {
		m.ProjectID = ""
	}
	// The index runs inside the transaction: a memory it refuses is not saved either.
	created, err = b.db.SaveMemory(ctx, m, b.index)
	if err != nil {
		b.unindex(ctx, m)
		return nil, false, err
	}
	return m, created, nil
}

// Update changes a memory the project sees (its own or its org's).
func (b *Base) Update(ctx context.Context, orgID, projectID, id string, p store.MemoryPatch) (*Memory, error) {
	if p.Title != nil {
		t := oneLine(*p.Title)
		p.Title = &t
	}
	var seen *Memory
	m, err := b.db.UpdateMemory(ctx, orgID, projectID, id, p, func(ctx context.Context, m *Memory) error {
		if err := validate(m.Scope, m.Key, m.Title, m.Text); err != nil {
			return err
		}
		seen = m
		return b.index(ctx, m)
	})
	if err != nil && seen != nil {
		b.unindex(ctx, seen)
	}
	return m, err
}

// Forget deletes a memory the project sees, and its document.
func (b *Base) Forget(ctx context.Context, orgID, projectID, id string) error {
	var seen *Memory
	err := b.db.DeleteMemory(ctx, orgID, projectID, id, func(ctx context.Context, m *Memory) error {
		seen = m
		err := b.rag.Delete(ctx, scopeOf(m), rag.CollectionMemories, docName(m.ID))
		if errors.Is(err, rag.ErrNotFound) {
			return nil
		}
		return err
	})
	if err != nil && seen != nil {
		b.unindex(ctx, seen)
	}
	return err
}

// Get returns one memory the project sees.
func (b *Base) Get(ctx context.Context, orgID, projectID, id string) (*Memory, error) {
	return b.db.FindMemoryByID(ctx, orgID, projectID, id)
}

// List lists the memories a project sees, most recent first.
func (b *Base) List(ctx context.Context, f store.MemoryFilter) ([]Memory, int, error) {
	return b.db.FindMemories(ctx, f)
}

// RecallKey returns the memory with this key that the project sees: its own first, else its org's.
func (b *Base) RecallKey(ctx context.Context, orgID, projectID, key string) (*Memory, error) {
	m, err := b.db.FindMemoryByKey(ctx, orgID, projectID, key)
	if store.IsNotFound(err) {
		return b.db.FindMemoryByKey(ctx, orgID, "", key)
	}
	return m, err
}

// Recall returns the memories that best match text (ranked by the RAG index), at most limit.
func (b *Base) Recall(ctx context.Context, orgID, projectID, text string, limit int) ([]Memory, error) {
	hits, err := b.Search(ctx, orgID, projectID, rag.Query{Text: text, Collections: []string{rag.CollectionMemories}, Limit: min(rag.MaxLimit, limit*3)})
	if err != nil {
		return nil, err
	}
	out := []Memory{}
	seen := map[string]bool{}
	for _, h := range hits {
		id := strings.TrimSuffix(h.Name, ".md")
		if seen[id] || !store.ValidID(id) {
			continue
		}
		seen[id] = true
		m, err := b.db.FindMemoryByID(ctx, orgID, projectID, id)
		if store.IsNotFound(err) {
			continue // a file without its row (copied by hand): not a memory
		}
		if err != nil {
			return nil, err
		}
		out = append(out, *m)
		if len(out) == limit {
			break
		}
	}
	return out, nil
}

// Search is search_knowledge: ranked chunks of the project's and its org's runbooks, facts, incidents and
// memories (q.Collections narrows it).
func (b *Base) Search(ctx context.Context, orgID, projectID string, q rag.Query) ([]rag.Hit, error) {
	return b.rag.Search(ctx, rag.Scope{OrgID: orgID, ProjectID: projectID}, q)
}

// IndexStats is what this server's index holds of scope (rag.Store.Stats): on a cluster, what its follower
// has applied of the shared documents.
func (b *Base) IndexStats(scope rag.Scope) rag.Stats { return b.rag.Stats(scope) }

// unindex puts this server's index back in line with the database after a memory write whose transaction
// failed: on a shared database the document's change joined that transaction and reached the index before
// the commit (rag.Store.Refresh; nothing to do with files).
func (b *Base) unindex(ctx context.Context, m *Memory) {
	if m == nil || !store.ValidID(m.ID) {
		return
	}
	_ = b.rag.Refresh(context.WithoutCancel(ctx), scopeOf(m), rag.CollectionMemories, docName(m.ID))
}

// index writes the memory's document: a Markdown file named by its id, so renaming a key never moves it.
// ctx carries the memory's transaction (store.WithTx), which a document row on a shared database joins.
func (b *Base) index(ctx context.Context, m *Memory) error {
	title := m.Title
	if title == "" {
		title = m.Key
	}
	content := "# " + title + "\n\nKey: " + m.Key + "\n\n" + m.Text + "\n"
	tags := m.Tags
	if tags == nil {
		tags = []string{}
	}
	_, err := b.rag.Put(ctx, scopeOf(m), rag.CollectionMemories, docName(m.ID), []byte(content), tags)
	return err
}

func docName(id string) string { return id + ".md" }

func scopeOf(m *Memory) rag.Scope {
	if m.Scope == store.MemoryScopeOrg {
		return rag.Scope{OrgID: m.OrgID}
	}
	return rag.Scope{OrgID: m.OrgID, ProjectID: m.ProjectID}
}

// FieldError is a memory input the caller must fix; Field names it.
type FieldError struct{ Field, Msg string }

func (e *FieldError) Error() string { return "memory " + e.Field + ": " + e.Msg }

func validate(scope, key, title, text string) error {
	switch {
	case scope != store.MemoryScopeProject && scope != store.MemoryScopeOrg:
		return &FieldError{"scope", "must be project or org"}
	case !KeyPattern.MatchString(key):
		return &FieldError{"key", "must match " + KeyPattern.String()}
	case len([]rune(title)) > MaxTitleLen:
		return &FieldError{"title", "too long"}
	case strings.TrimSpace(text) == "":
		return &FieldError{"text", "must not be empty"}
	case len(text) > MaxTextLen:
		return &FieldError{"text", "too long"}
	}
	return nil
}

func oneLine(s string) string {
	return strings.TrimSpace(strings.Join(strings.Fields(s), " "))
}
