package backup

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// MaxFileBytes bounds one file of an archive, so a damaged or hostile archive
// cannot fill the disk through one header.
const MaxFileBytes = 64 << 30

// Restore extracts an archive into dataDir, which must not exist or be empty,
// and checks the restored database. Only regular files with clean relative
// names are accepted; nothing is written outside dataDir. On failure the
// partially restored directory is removed.
func Restore(ctx context.Context, r io.Reader, dataDir string) (m *Manifest, err error) {
	if err := ensureEmptyDir(dataDir); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			cleanDir(dataDir)
		}
	}()
	root, err := os.OpenRoot(dataDir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("restore: not a backup archive: %w", err)
	}
	tr := tar.NewReader(gz)
	sawDB := false
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("restore: damaged archive: %w", err)
		}
		if hdr.Typeflag != tar.TypeReg {
			return nil, fmt.Errorf("restore: refusing %q: only regular files are restored", hdr.Name)
		}
		name := hdr.Name
		if name == "" || path.IsAbs(name) || path.Clean(name) != name || name == ".." || strings.HasPrefix(name, "../") || strings.Contains(name, "\\") {
			return nil, fmt.Errorf("restore: refusing unsafe path %q", hdr.Name)
		}
		if hdr.Size < 0 || hdr.Size > MaxFileBytes {
			return nil, fmt.Errorf("restore: %q is too large", name)
		}
		if name == manifestName {
			var mf Manifest
			if err := json.NewDecoder(io.LimitReader(tr, 1<<20)).Decode(&mf); err != nil {
				return nil, fmt.Errorf("restore: bad manifest: %w", err)
			}
			if mf.Format != Format {
				return nil, fmt.Errorf("restore: archive format %d, this binary reads %d", mf.Format, Format)
			}
			m = &mf
			continue
		}
		if dir := path.Dir(name); dir != "." {
			if err := root.MkdirAll(dir, 0o700); err != nil {
				return nil, err
			}
		}
		f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, fmt.Errorf("restore: %w", err)
		}
		_, err = io.Copy(f, io.LimitReader(tr, hdr.Size))
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("restore: %s: %w", name, err)
		}
		sawDB = sawDB || name == dbName
	}
	if m == nil || !sawDB {
		return nil, errors.New("restore: the archive has no manifest or no database")
	}
	if err := checkDB(ctx, filepath.Join(dataDir, dbName)); err != nil {
		return nil, err
	}
	return m, nil
}

// ensureEmptyDir creates dir (mode 0700) or accepts an empty one.
func ensureEmptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return os.MkdirAll(dir, 0o700)
	}
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("restore: %s is not empty; restore into a new directory", dir)
	}
	return os.Chmod(dir, 0o700)
}

// cleanDir empties dir after a failed restore, keeping dir itself.
func cleanDir(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		_ = os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

// checkDB runs SQLite's integrity check on the restored database.
func checkDB(ctx context.Context, p string) error {
	db, err := sql.Open("sqlite", "file:"+p)
	if err != nil {
		return err
	}
	defer db.Close()
	var res string
	if err := db.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&res); err != nil {
		return fmt.Errorf("restore: check the database: %w", err)
	}
	if res != "ok" {
		return fmt.Errorf("restore: the restored database fails its integrity check: %s", res)
	}
	return nil
}
