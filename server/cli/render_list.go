package cli

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"

	"github.com/spf13/cobra"
)

// emit prints a result in the form asked for: the server's JSON, the ids,
// or a table (or fields) for people.
func (a *app) emit(raw json.RawMessage, ids []string, people func()) error {
	switch {
	case a.out.json:
		return a.out.printJSON(raw)
	case a.out.quiet:
		a.out.ids(ids...)
	default:
		people()
	}
	return nil
}

// page is the paginated list shape of the conventions.
type page[T any] struct {
	Items  []T `json:"items"`
	Total  int `json:"total"`
	Limit  int `json:"limit"`
	Offset int `json:"offset"`
}

// pageFlags are --limit and --offset of a paginated list.
type pageFlags struct{ limit, offset int }

func (p *pageFlags) add(cmd *cobra.Command, def int) {
	cmd.Flags().IntVar(&p.limit, "limit", def, "at most this many (1-200)")
	cmd.Flags().IntVar(&p.offset, "offset", 0, "skip this many")
}

func (p *pageFlags) query() url.Values {
	q := url.Values{}
	q.Set("limit", strconv.Itoa(p.limit))
	q.Set("offset", strconv.Itoa(p.offset))
	return q
}

// getPage fetches a page of a project-scoped list.
func getPage[T any](ctx context.Context, a *app, path string, q url.Values) (*page[T], json.RawMessage, error) {
	c, err := a.projectClient(ctx)
	if err != nil {
		return nil, nil, err
	}
	var p page[T]
	var raw json.RawMessage
	stop := a.out.spinner("loading")
	err = c.call(ctx, "GET", path, q, nil, &p, &raw)
	stop()
	return &p, raw, err
}

// more tells people a list has more than was shown.
func (a *app) more(p interface{ shown() (int, int, int) }) {
	n, off, total := p.shown()
	if off+n < total {
		a.out.note("%s", a.out.errPaint(dim, "showing "+strconv.Itoa(off+1)+"-"+strconv.Itoa(off+n)+" of "+strconv.Itoa(total)+" (use --offset/--limit)"))
	}
}

func (p *page[T]) shown() (int, int, int) { return len(p.Items), p.Offset, p.Total }
