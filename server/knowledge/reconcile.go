package knowledge

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/opsagent/opsagent/rag"
)

// Reconcile makes the RAG memories collection match the memory rows, which
// are the truth: a restore (whose database snapshot and files were taken
// moments apart) or a hand edit of a memory file can leave a memory without
// its document, a stale document, or a document without its memory. Each fix
// runs in its own write transaction that re-reads the row, so it cannot undo
// a concurrent Remember, Update or Forget. The server runs it at start.
func (b *Base) Reconcile(ctx context.Context) (fixed, removed int, err error) {
	ids := map[string]bool{}
	after := ""
	for {
		ms, err := b.db.FindMemoriesAfter(ctx, after, 500)
		if err != nil {
			return fixed, removed, err
		}
		if len(ms) == 0 {
			break
		}
		for i := range ms {
			m := &ms[i]
			ids[m.ID] = true
			after = m.ID
			if b.upToDate(ctx, m) {
				continue
			}
			err := b.db.RefreshMemory(ctx, m.ID, b.index)
			if err != nil {
				return fixed, removed, err
			}
			fixed++
		}
	}
	scopes, err := b.db.TenantScopes(ctx)
	if err != nil {
		return fixed, removed, err
	}
	for _, sc := range scopes {
		scope := rag.Scope{OrgID: sc[0], ProjectID: sc[1]}
		docs, err := b.rag.List(ctx, scope, rag.CollectionMemories)
		if err != nil {
			return fixed, removed, err
		}
		for _, d := range docs {
			id := strings.TrimSuffix(d.Name, ".md")
			if ids[id] {
				continue
			}
			err := b.db.IfMemoryGone(ctx, id, func(ctx context.Context) error {
				if err := b.rag.Delete(ctx, scope, rag.CollectionMemories, d.Name); err != nil && !errors.Is(err, rag.ErrNotFound) {
					return err
				}
				removed++
				return nil
			})
			if err != nil {
				return fixed, removed, err
			}
		}
	}
	return fixed, removed, nil
}

// upToDate reports whether the memory's document holds its current text and tags.
func (b *Base) upToDate(ctx context.Context, m *Memory) bool {
	d, err := b.rag.Get(ctx, scopeOf(m), rag.CollectionMemories, docName(m.ID))
	if err != nil {
		return false
	}
	want := slices.Clone(m.Tags)
	slices.Sort(want)
	got := slices.Clone(d.Tags)
	slices.Sort(got)
	return strings.Contains(string(d.Content), "\n"+m.Text+"\n") && slices.Equal(want, got)
}
