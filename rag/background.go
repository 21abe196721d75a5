package rag

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrLoading: the index is still opening (OpenInBackground). The server
// answers 503 with a Retry-After and /readyz reports not ready.
var ErrLoading = errors.New("the knowledge index is still loading")

// DefaultLoadWait is how long a call waits for a loading index before it
// fails with ErrLoading (Options.LoadWait).
const DefaultLoadWait = 2 * time.Second

// loading is the state of a background open; nil for a Store from Open.
type loading struct {
	done chan struct{} // closed when the load ended
	err  error         // its failure, set before done closes
}

// OpenInBackground returns at once a Store whose index opens and reconciles
// with the files in a goroutine (what Open does before returning), so a
// server can listen while a large index loads. Until the load ends, calls
// that need the index wait up to Options.LoadWait for it and then fail with
// ErrLoading; Health reports ErrLoading and Stats counts nothing. A failed
// load is logged, and Health and every call report it from then on.
func OpenInBackground(ctx context.Context, dir string, opts Options) (*Store, error) {
	s, err := newStore(dir, opts)
	if err != nil {
		return nil, err
	}
	l := &loading{done: make(chan struct{})}
	s.loading = l
	go func() {
		defer close(l.done)
		started := time.Now()
		if err := s.load(ctx); err != nil {
			l.err = fmt.Errorf("rag: the knowledge index did not open: %w", err)
			s.log.Error("rag: the knowledge index did not open", "err", err.Error())
			return
		}
		s.log.Info("rag: knowledge index ready", "documents", s.documentCount(), "took_ms", time.Since(started).Milliseconds())
	}()
	return s, nil
}

// await waits for a background load (up to LoadWait) and reports its failure.
func (s *Store) await(ctx context.Context) error {
	// Loaded already (or never in the background): no timer. A failed load
	// wraps its cause, so it never is ErrLoading itself.
	if err := s.loaded(); err != ErrLoading {
		return err
	}
	l := s.loading
	t := time.NewTimer(s.opts.LoadWait)
	defer t.Stop()
	select {
	case <-l.done:
		return l.err
	case <-t.C:
		return ErrLoading
	case <-ctx.Done():
		return ctx.Err()
	}
}

// loaded reports, without waiting, whether the index is usable: nil, or
// ErrLoading, or the failure of the load.
func (s *Store) loaded() error {
	l := s.loading
	if l == nil {
		return nil
	}
	select {
	case <-l.done:
		return l.err
	default:
		return ErrLoading
	}
}

// documentCount is the number of documents indexed, for the log line.
func (s *Store) documentCount() int {
	s.mmu.RLock()
	defer s.mmu.RUnlock()
	return len(s.manifest)
}

// Loaded is closed when the index is open (at once for a Store from Open):
// the server returns the load's garbage to the system then.
func (s *Store) Loaded() <-chan struct{} {
	if s.loading == nil {
		c := make(chan struct{})
		close(c)
		return c
	}
	return s.loading.done
}
