// Package backup makes a consistent archive of a running server's data
// directory and restores one into a fresh directory. No HTTP: main dispatches
// `opsagent backup` and `opsagent restore` here.
//
// The archive is a gzip-compressed tar holding:
//
//	MANIFEST.json       what was archived, when, by which version
//	opsagent.db         a snapshot made with VACUUM INTO: one read transaction
//	                    of SQLite, so consistent while the server writes
//	vault/keyring       read before and after the snapshot and retried until
//	                    unchanged, so it opens every ciphertext of the snapshot
//	                    even if a key rotation ran meanwhile
//	everything else     keys/, avatars/, rag/docs/ and any other file of the
//	                    data directory, except the live database files, the
//	                    disposable RAG index (rebuilt from rag/docs at start),
//	                    the mail outbox and temporary files
//
// Every file of the directory is written by atomic rename, so each one is
// read whole, old or new. The archive holds the vault keyring (wrapped only
// when the server uses OPSAGENT_VAULT_PASSPHRASE) and the token signing key:
// it is written with mode 0600 and must be kept like the data directory.
package backup

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the SQLite driver the store uses
)

// Format is the archive format version written in the manifest.
const Format = 1

const (
	dbName       = "opsagent.db"
	keyringPath  = "vault/keyring"
	manifestName = "MANIFEST.json"
)

// Manifest describes an archive.
type Manifest struct {
	Format    int       `json:"format"`
	CreatedAt time.Time `json:"created_at"`
	Version   string    `json:"version"`
	Files     int       `json:"files"`
	Bytes     int64     `json:"bytes"`
	DBBytes   int64     `json:"db_bytes"`
}

// skip reports the paths (slash, relative to the data dir) that are not
// archived: the live database (snapshotted instead), the disposable index,
// transient mail and temporary files.
func skip(rel string, dir bool) bool {
	switch {
	case rel == dbName || strings.HasPrefix(rel, dbName+"-"):
		return true
	case rel == "rag/index" || strings.HasPrefix(rel, "rag/index/"):
		return true
	case rel == "outbox" || strings.HasPrefix(rel, "outbox/"):
		return true
	case rel == keyringPath: // added on its own, consistently with the snapshot
		return true
	case rel == "serve.lock": // the running server's flock (main_lock_unix.go), not state
		return true
	}
	base := filepath.Base(rel)
	return !dir && (strings.HasSuffix(base, ".tmp") || strings.HasPrefix(base, ".tmp"))
}

// Create writes an archive of dataDir to w while the server may be running.
// version is recorded in the manifest.
func Create(ctx context.Context, dataDir, version string, w io.Writer) (*Manifest, error) {
	if _, err := os.Stat(filepath.Join(dataDir, dbName)); err != nil {
		return nil, fmt.Errorf("backup: %s is not a data directory: %w", dataDir, err)
	}
	tmp, err := os.MkdirTemp("", "opsagent-backup-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	snap := filepath.Join(tmp, dbName)
	keyring, err := snapshotDB(ctx, dataDir, snap)
	if err != nil {
		return nil, err
	}

	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	m := &Manifest{Format: Format, CreatedAt: time.Now().UTC(), Version: version}
	add := func(name string, data []byte) error {
		hdr := &tar.Header{Name: name, Mode: 0o600, Size: int64(len(data)), ModTime: m.CreatedAt, Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err := tw.Write(data)
		m.Files++
		m.Bytes += int64(len(data))
		return err
	}
	if err := addFile(tw, snap, dbName, m); err != nil {
		return nil, err
	}
	m.DBBytes = m.Bytes
	if keyring != nil {
		if err := add(keyringPath, keyring); err != nil {
			return nil, err
		}
	}
	err = filepath.WalkDir(dataDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while walking
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, _ := filepath.Rel(dataDir, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if skip(rel, d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil // directories are implied by file names; no symlinks or devices
		}
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		return add(rel, data)
	})
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	mb, _ := json.MarshalIndent(m, "", "  ")
	if err := add(manifestName, mb); err != nil {
		return nil, err
	}
	m.Files-- // the manifest does not count itself
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return m, nil
}

// snapshotDB writes a consistent copy of the database to dst with VACUUM INTO
// and returns the keyring bytes that open it: read before and after the
// snapshot, retried while a rotation changes it in between.
func snapshotDB(ctx context.Context, dataDir, dst string) ([]byte, error) {
	src := filepath.Join(dataDir, dbName)
	db, err := sql.Open("sqlite", "file:"+src+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for attempt := 0; attempt < 10; attempt++ {
		before, err := readOptional(filepath.Join(dataDir, filepath.FromSlash(keyringPath)))
		if err != nil {
			return nil, err
		}
		_ = os.Remove(dst)
		if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, dst); err != nil {
			return nil, fmt.Errorf("backup: snapshot the database: %w", err)
		}
		after, err := readOptional(filepath.Join(dataDir, filepath.FromSlash(keyringPath)))
		if err != nil {
			return nil, err
		}
		if bytes.Equal(before, after) {
			return after, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(attempt+1) * 100 * time.Millisecond):
		}
	}
	return nil, errors.New("backup: the vault keyring kept changing during the snapshot (a key rotation is running); try again")
}

func readOptional(p string) ([]byte, error) {
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// addFile streams a file that nothing else writes (the snapshot) into tw.
func addFile(tw *tar.Writer, path, name string, m *Manifest) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: fi.Size(), ModTime: m.CreatedAt, Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	n, err := io.Copy(tw, f)
	m.Files++
	m.Bytes += n
	return err
}
