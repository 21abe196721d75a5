package server

import (
	"context"
	"sync"
	"time"

	"github.com/opsagent/opsagent/store"
)

// revocationList is the access-token blocklist: persisted in SQLite, read on
// every request from memory (one process owns the data directory).
type revocationList struct {
	mu  sync.RWMutex
	ids map[string]time.Time
}

func loadRevocations(ctx context.Context, db *store.DB) (*revocationList, error) {
	ids, err := db.RevokedTokens(ctx)
	if err != nil {
		return nil, err
	}
	return &revocationList{ids: ids}, nil
}

func (l *revocationList) has(jti string) bool {
	l.mu.RLock()
	_, ok := l.ids[jti]
	l.mu.RUnlock()
	return ok
}

// add is called after the revoking transaction commits.
func (l *revocationList) add(jti string, exp time.Time) {
	l.mu.Lock()
	l.ids[jti] = exp
	l.mu.Unlock()
}

func (l *revocationList) sweep(now time.Time) {
	l.mu.Lock()
	for k, exp := range l.ids {
		if exp.Before(now) {
			delete(l.ids, k)
		}
	}
	l.mu.Unlock()
}
