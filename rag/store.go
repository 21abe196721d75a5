package rag

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Options tune a Store. The zero value is usable.
type Options struct {
	// SyncInterval is how often Start reconciles the files with the index. Default 30s.
	SyncInterval time.Duration
	// MaxDocBytes caps one document. Default DefaultMaxDocBytes (1 MiB).
	MaxDocBytes int
	// ChunkBytes caps one chunk's text; ChunkOverlap bytes of a long section's previous piece start the
	// next one. Defaults 1500 and 150. Changing either rebuilds the index at the next Open.
	ChunkBytes   int
	ChunkOverlap int
	// BatchFiles is how many files one index batch holds while syncing. Default 256.
	BatchFiles int
	// Logger receives warnings about files that cannot be indexed and index rebuilds. Default: discard.
	Logger *slog.Logger
	// Now is the clock (tests inject one). Default time.Now.
	Now func() time.Time

	// LoadWait is how long a call waits for an index still loading in the background
	// (OpenInBackground) before failing with ErrLoading. Default DefaultLoadWait.
	LoadWait time.Duration
	// Source, when set, holds the documents instead of files under dir/docs (a PostgreSQL cluster's
	// database): the index under dir is this server's cache of it (see Source).
	Source Source
	// FollowInterval is how often Start applies the Source's new changes. Default DefaultFollowInterval.
	FollowInterval time.Duration

	// lockTimeout bounds the wait for an index another process holds open. Default 10s.
	lockTimeout time.Duration
}

func (o Options) withDefaults() (Options, error) {
	if o.SyncInterval <= 0 {
		o.SyncInterval = 30 * time.Second
	}
	if o.MaxDocBytes <= 0 {
		o.MaxDocBytes = DefaultMaxDocBytes
	}
	if o.ChunkBytes <= 0 {
		o.ChunkBytes = 1500
	}
	if o.ChunkOverlap <= 0 {
		o.ChunkOverlap = 150
	}
	if o.ChunkBytes < 200 || o.ChunkOverlap*4 > o.ChunkBytes {
		return o, fmt.Errorf("rag: ChunkBytes must be at least 200 and four times ChunkOverlap")
	}
	if o.BatchFiles <= 0 {
		o.BatchFiles = 256
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.LoadWait <= 0 {
		o.LoadWait = DefaultLoadWait
	}
	if o.FollowInterval <= 0 {
		o.FollowInterval = DefaultFollowInterval
	}
	if o.lockTimeout <= 0 {
		o.lockTimeout = 10 * time.Second
	}
	return o, nil
}

// Store is the retrieval store. Its methods are safe for concurrent use.
type Store struct {
	opts     Options
	log      *slog.Logger
	chunker  chunker
	dir      string
	indexDir string
	docs     *os.Root // dir/docs: no file operation of the store leaves it
	index    bleve.Index

	// wmu serializes writers of files and index (Put, Delete, each Sync batch), so that the index follows
	// the files in the order they were written.
	wmu sync.Mutex
	// mmu guards the in-memory copy of the manifest and what goes with it.
	mmu         sync.RWMutex
	manifest    map[string]entry
	rejected    map[string]fileStat // files that could not be indexed, skipped until they change
	lastIndexed time.Time

	pending  atomic.Int64
	syncMu   sync.Mutex // one Sync at a time
	activity *activityLog

	// With a Source (source.go, follow.go): the change applied last per document (deleted ones too, so
	// an older change read late never brings one back), and the feed position of the follower.
	src      Source
	seqs     map[string]int64 // guarded by mmu
	followMu sync.Mutex
	cursor   int64 // guarded by followMu

	closed   atomic.Bool
	loading  *loading // set by OpenInBackground until and after the load
	loopStop context.CancelFunc
	loopDone chan struct{}
}

// Open opens (or creates) the store under dir, opens the index (rebuilding it when it is missing, unreadable
// or built under other rules) and reconciles it with the files before returning, so every document written
// before is searchable.
func Open(ctx context.Context, dir string, opts Options) (*Store, error) {
	s, err := newStore(dir, opts)
	if err != nil {
		return nil, err
	}
	if err := s.load(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// newStore prepares a Store whose index is not open yet (see load).
func newStore(dir string, opts Options) (*Store, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	docsDir := filepath.Join(dir, "docs")
	if err := os.MkdirAll(docsDir, 0o700); err != nil {
		return nil, fmt.Errorf("rag: %w", err)
	}
	root, err := os.OpenRoot(docsDir)
	if err != nil {
		return nil, fmt.Errorf("rag: %w", err)
	}
	return &Store{
		opts:     opts,
		log:      opts.Logger,
		chunker:  chunker{max: opts.ChunkBytes, overlap: opts.ChunkOverlap},
		dir:      dir,
		indexDir: filepath.Join(dir, "index"),
		docs:     root,
		manifest: map[string]entry{},
		rejected: map[string]fileStat{},
		activity: newActivityLog(opts.Now),
		src:      opts.Source,
		seqs:     map[string]int64{},
	}, nil
}

// load opens the index and reconciles it with the files; on failure it
// releases what it opened.
func (s *Store) load(ctx context.Context) error {
	if err := s.openIndex(); err != nil {
		s.docs.Close()
		return err
	}
	fill := s.sync
	if s.src != nil {
		fill = s.rebuild
	}
	if err := fill(ctx); err != nil {
		s.index.Close()
		s.docs.Close()
		return err
	}
	return nil
}

// schemaKey is the internal key that records the rules the index was built under.
var schemaKey = []byte("schema")

func (s *Store) schema() string {
	return fmt.Sprintf("%s chunk=%d overlap=%d", indexSchema, s.opts.ChunkBytes, s.opts.ChunkOverlap)
}

// openIndex opens the index, or starts an empty one that the following Sync fills from the files.
func (s *Store) openIndex() error {
	var idx bleve.Index
	// Without a timeout bleve waits forever for the lock of an index that another process has open.
	config := map[string]any{"bolt_timeout": s.opts.lockTimeout.String()}
	err := recovered(func() (err error) { idx, err = bleve.OpenUsing(s.indexDir, config); return err })
	switch {
	case err == nil:
		v, gerr := idx.GetInternal(schemaKey)
		if gerr != nil || string(v) != s.schema() {
			err = fmt.Errorf("built under %q, want %q (%v)", v, s.schema(), gerr)
		} else {
			s.index = idx
			if err = recovered(s.loadManifest); err == nil {
				return nil
			}
		}
		recovered(idx.Close)
		s.index, s.manifest, s.lastIndexed = nil, map[string]entry{}, time.Time{}
		s.log.Warn("rag: rebuilding index from files", "reason", err.Error())
	case errors.Is(err, bolterrors.ErrTimeout):
		// In use, not damaged: rebuilding would delete another process's index.
		return fmt.Errorf("rag: index %s is locked by another process: %w", s.indexDir, err)
	case errors.Is(err, bleve.ErrorIndexPathDoesNotExist):
	default:
		s.log.Warn("rag: index unreadable, rebuilding it from files", "err", err.Error())
	}
	if err := os.RemoveAll(s.indexDir); err != nil {
		return fmt.Errorf("rag: remove index: %w", err)
	}
	idx, err = bleve.New(s.indexDir, newMapping())
	if err != nil {
		return fmt.Errorf("rag: create index: %w", err)
	}
	if err := idx.SetInternal(schemaKey, []byte(s.schema())); err != nil {
		idx.Close()
		return fmt.Errorf("rag: create index: %w", err)
	}
	s.index = idx
	return nil
}

// loadManifest reads every manifest entry of the index into memory, a page at a time.
func (s *Store) loadManifest() error {
	q := bleve.NewTermQuery(kindManifest)
	q.SetField(fKind)
	var after []string
	for {
		req := bleve.NewSearchRequestOptions(q, 2000, 0, false)
		req.Fields = []string{"*"}
		req.SortBy([]string{"_id"})
		if after != nil {
			req.SetSearchAfter(after)
		}
		res, err := s.index.Search(req)
		if err != nil {
			return fmt.Errorf("load manifest: %w", err)
		}
		for _, h := range res.Hits {
			e, ok := entryFromFields(h.Fields)
			if !ok {
				return fmt.Errorf("load manifest: entry %s has no path", h.ID)
			}
			s.manifest[e.Path] = e
			if t := time.Unix(0, e.IndexedAt); t.After(s.lastIndexed) {
				s.lastIndexed = t
			}
		}
		if len(res.Hits) < req.Size {
			return nil
		}
		after = []string{res.Hits[len(res.Hits)-1].ID}
	}
}

// Start runs Sync every Options.SyncInterval until ctx ends or the store is closed, so files copied,
// edited or deleted by hand reach the index without a restart. It returns at once.
func (s *Store) Start(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	s.wmu.Lock()
	if s.loopStop != nil || s.closed.Load() {
		s.wmu.Unlock()
		cancel()
		return
	}
	s.loopStop, s.loopDone = cancel, done
	s.wmu.Unlock()
	go func() {
		defer close(done)
		if s.src != nil {
			s.followLoop(ctx, s.opts.FollowInterval)
			return
		}
		t := time.NewTicker(s.opts.SyncInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := s.Sync(ctx); err != nil && ctx.Err() == nil {
					s.log.Error("rag: sync failed", "err", err.Error())
				}
			}
		}
	}()
}

// Close stops the sync loop and closes the index. Files need nothing: they were fsynced when written.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	if l := s.loading; l != nil {
		<-l.done // an index half opened cannot be closed
		if l.err != nil {
			return nil // load released what it opened
		}
	}
	s.wmu.Lock()
	stop, done := s.loopStop, s.loopDone
	s.wmu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	err := s.index.Close()
	if rerr := s.docs.Close(); err == nil {
		err = rerr
	}
	return err
}

// recovered runs f and turns a panic into an error. Bleve trusts its files: a damaged segment makes it
// index out of range rather than fail, and a damaged index must lead to a rebuild, not a crash.
func recovered(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("index corrupt: %v", r)
		}
	}()
	return f()
}
