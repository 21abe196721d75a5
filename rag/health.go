package rag

import (
	"errors"
	"fmt"
)

// Health reports whether the index is open and answers a read, for the
// server's readiness check. It takes no writer lock.
func (s *Store) Health() error {
	if s.closed.Load() {
		return errors.New("the knowledge store is closed")
	}
	if err := s.loaded(); err != nil {
		return err
	}
	if s.index == nil {
		return errors.New("the index is not open")
	}
	if _, err := s.index.DocCount(); err != nil {
		return fmt.Errorf("the index does not answer: %w", err)
	}
	return nil
}
