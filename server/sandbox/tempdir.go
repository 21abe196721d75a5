package sandbox

import (
	"os"
	"path/filepath"

	"github.com/opsagent/opsagent/server/sandbox/confine"
)

// TempDir makes a command's private temporary directory (Profile.TempDir)
// beneath base, in a directory that holds only such dirs
// (base/.opsagent-sandbox): under a read-only profile nothing there
// executes, and every read-only command's Landlock rules but one are then
// the same, so they are built once (confine's ruleset cache). remove
// deletes the directory and what the command left in it.
func TempDir(base string) (dir string, remove func(), err error) {
	root := filepath.Join(base, confine.TempRoot)
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", nil, err
	}
	dir, err = os.MkdirTemp(root, "tmp-")
	if err != nil {
		return "", nil, err
	}
	return dir, func() { _ = os.RemoveAll(dir) }, nil
}
