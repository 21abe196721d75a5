package knowledge

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/opsagent/opsagent/rag"
	"github.com/opsagent/opsagent/store"
)

// CopyReport is what CopyDocuments copied and compared.
type CopyReport struct {
	Documents int // documents copied
	Searches  int // searches compared between the files and the database
	Mismatch  []string
}

// OK reports whether the copy verified.
func (r *CopyReport) OK() bool { return len(r.Mismatch) == 0 }

// maxCompared bounds the searches a verification runs (one per document).
const maxCompared = 500

// CopyDocuments moves an appliance's knowledge documents (the files of
// files, under DATA_DIR/rag) into a shared database (migrate-to-postgres,
// issue 20), then verifies the copy: every scope lists the same documents
// with the same content, and a search for each document's title (the first
// 500) finds the same documents in an index built from the database alone,
// under scratch, as the servers of the cluster will build theirs. Only the
// scopes of organizations and projects that exist are copied (files left by
// an erased organization are not). dst must be empty of documents.
func CopyDocuments(ctx context.Context, files *rag.Store, src, dst *store.DB, scratch string) (*CopyReport, error) {
	rep := &CopyReport{}
	scopes, err := src.TenantScopes(ctx)
	if err != nil {
		return nil, err
	}
	var all []rag.Doc
	for _, sc := range scopes {
		for _, col := range rag.Collections() {
			docs, err := files.List(ctx, rag.Scope{OrgID: sc[0], ProjectID: sc[1]}, col)
			if err != nil {
				return nil, err
			}
			all = append(all, docs...)
		}
	}
	// A few hundred documents per transaction: one per document would take
	// minutes for a large knowledge base, one for all would hold it all in memory.
	const batch = 200
	for start := 0; start < len(all); start += batch {
		err := dst.Write(ctx, func(tx *store.Tx) error {
			tctx := store.WithTx(ctx, tx)
			for _, d := range all[start:min(start+batch, len(all))] {
				full, err := files.Get(ctx, d.Scope, d.Collection, d.Name)
				if err != nil {
					return fmt.Errorf("read %s/%s: %w", d.Collection, d.Name, err)
				}
				k := &store.KnowledgeDoc{OrgID: d.Scope.OrgID, ProjectID: d.Scope.ProjectID, Collection: d.Collection, Name: d.Name,
					Content: full.Content, Size: int64(len(full.Content)), SHA256: full.SHA256, Title: full.Title, Tags: full.Tags}
				if k.Tags == nil {
					k.Tags = []string{}
				}
				if err := dst.PutKnowledgeDoc(tctx, k); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("copy knowledge documents: %w", err)
		}
	}
	rep.Documents = len(all)

	shared, err := rag.Open(ctx, scratch, rag.Options{Source: Source(dst)})
	if err != nil {
		return nil, fmt.Errorf("build an index from the database: %w", err)
	}
	defer shared.Close()
	for _, sc := range scopes {
		scope := rag.Scope{OrgID: sc[0], ProjectID: sc[1]}
		for _, col := range rag.Collections() {
			a, err := files.List(ctx, scope, col)
			if err != nil {
				return nil, err
			}
			b, err := shared.List(ctx, scope, col)
			if err != nil {
				return nil, err
			}
			if docKeys(a) != docKeys(b) {
				rep.Mismatch = append(rep.Mismatch, fmt.Sprintf("documents of %s/%s %s: %d in files, %d in the database", sc[0], sc[1], col, len(a), len(b)))
			}
		}
	}
	for i, d := range all {
		if i == maxCompared {
			break
		}
		q := rag.Query{Text: d.Title, Limit: rag.MaxLimit}
		if strings.TrimSpace(q.Text) == "" {
			q.Text = d.Name
		}
		a, aerr := files.Search(ctx, d.Scope, q)
		b, berr := shared.Search(ctx, d.Scope, q)
		if aerr != nil || berr != nil {
			if (aerr == nil) != (berr == nil) {
				rep.Mismatch = append(rep.Mismatch, fmt.Sprintf("search %q: %v in files, %v in the database", q.Text, aerr, berr))
			}
			continue
		}
		rep.Searches++
		ka, kb := hitKeys(a), hitKeys(b)
		same := slices.Equal(ka, kb)
		if len(a) == rag.MaxLimit || len(b) == rag.MaxLimit {
			// Cut at the limit, ties may fall either side: the document itself must be there.
			me := d.Collection + "/" + d.Name
			same = slices.Contains(kb, me) == slices.Contains(ka, me)
		}
		if !same {
			rep.Mismatch = append(rep.Mismatch, fmt.Sprintf("search %q in %s/%s: %d documents in files, %d in the database", q.Text, d.Scope.OrgID, d.Scope.ProjectID, len(ka), len(kb)))
		}
	}
	return rep, nil
}

func docKeys(ds []rag.Doc) string {
	var ks []string
	for _, d := range ds {
		ks = append(ks, d.Name+"@"+d.SHA256)
	}
	slices.Sort(ks)
	return strings.Join(ks, "\n")
}

// hitKeys are the documents a search found, each once, sorted.
func hitKeys(hs []rag.Hit) []string {
	var ks []string
	for _, h := range hs {
		ks = append(ks, h.Collection+"/"+h.Name)
	}
	slices.Sort(ks)
	return slices.Compact(ks)
}
