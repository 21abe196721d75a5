package auth

import (
	"runtime/debug"
	"sync"
	"time"
)

// Each argon2id hash allocates its memory (12 MiB) afresh. The garbage
// collector lets the heap grow to twice what is live before collecting, and
// the runtime hands freed pages back to the system only gradually, so after
// a few logins an otherwise idle server kept 100+ MB resident for minutes.
// When a burst of hashing ends (no hash running for returnAfter), the memory
// is collected and returned at once: one collection per burst, paid while
// idle.
const returnAfter = time.Second

// memReturn debounces the return of memory after a burst of hashes.
type memReturn struct {
	mu    sync.Mutex
	timer *time.Timer
	free  func() // debug.FreeOSMemory; tests count calls
}

// hashEnded is called when a hash finishes and none other is running.
func (m *memReturn) hashEnded() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.timer == nil {
		free := m.free
		if free == nil {
			free = debug.FreeOSMemory
		}
		m.timer = time.AfterFunc(returnAfter, free)
		return
	}
	m.timer.Reset(returnAfter)
}

// hashStarted postpones a pending return while hashing goes on.
func (m *memReturn) hashStarted() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.timer != nil {
		m.timer.Stop()
	}
}
