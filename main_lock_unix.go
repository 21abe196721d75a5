//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockFileName is the file in the data directory that a serving process
// holds an exclusive flock on (on PostgreSQL too: the vault and the index
// there are this node's own).
const lockFileName = "serve.lock"

// lockDataDir takes the data directory for this process, or says which
// process has it. Two servers on one directory would each write the SQLite
// file, the knowledge index and the vault as if alone. The kernel drops the
// lock when the process ends, however it ends, so a crash leaves no stale lock.
func lockDataDir(dir string) (release func(), err error) {
	path := filepath.Join(dir, lockFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("data dir lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder := "another process"
			if b, _ := os.ReadFile(path); len(strings.TrimSpace(string(b))) > 0 {
				holder = "process " + strings.TrimSpace(string(b))
			}
			return nil, fmt.Errorf("data dir %s is in use by another opsagent serve (%s): stop it first, or give this server its own --data-dir (OPSAGENT_DATA_DIR)", dir, holder)
		}
		return nil, fmt.Errorf("data dir lock: %w", err)
	}
	// Who holds it, for the message above; the lock is the flock, not this text.
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return func() { f.Close() }, nil
}
