package rag

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

// fileStat is what decides, without reading a file, whether it changed since it was indexed.
type fileStat struct {
	size  int64
	mtime int64
}

// Sync reconciles the index with the files: new and changed files are (re-)indexed, files whose content
// did not change only get their manifest entry refreshed, and chunks of deleted files leave the index.
// Unchanged files cost one stat each. Files that cannot be indexed (too large, not UTF-8 text) are logged
// once and skipped until they change. Sync may run beside Put and Search; one Sync runs at a time.
func (s *Store) Sync(ctx context.Context) error {
	if err := s.await(ctx); err != nil {
		return err
	}
	if s.src != nil {
		if s.closed.Load() {
			return ErrClosed
		}
		return s.follow(ctx) // the documents are not files: catch up with the feed now
	}
	return s.sync(ctx)
}

// sync is Sync without waiting for a background load (which calls it).
func (s *Store) sync(ctx context.Context) error {
	if s.closed.Load() {
		return ErrClosed
	}
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	files, err := s.scan()
	if err != nil {
		return fmt.Errorf("rag: scan: %w", err)
	}
	var changed, gone []string
	s.mmu.Lock()
	for p, st := range files {
		if e, ok := s.manifest[p]; ok && e.Size == st.size && e.ModTime == st.mtime {
			continue
		}
		if r, ok := s.rejected[p]; ok && r == st {
			continue
		}
		changed = append(changed, p)
	}
	for p := range s.manifest {
		if _, ok := files[p]; !ok {
			gone = append(gone, p)
		}
	}
	for p := range s.rejected {
		if _, ok := files[p]; !ok {
			delete(s.rejected, p)
		}
	}
	s.mmu.Unlock()
	slices.Sort(changed)
	todo := append(changed, gone...)
	s.pending.Store(int64(len(todo)))
	defer s.pending.Store(0)
	for start := 0; start < len(todo); start += s.opts.BatchFiles {
		if err := ctx.Err(); err != nil {
			return err
		}
		part := todo[start:min(start+s.opts.BatchFiles, len(todo))]
		if err := s.syncBatch(part); err != nil {
			return err
		}
		s.pending.Add(-int64(len(part)))
	}
	return nil
}

// syncBatch brings the index up to date for a few paths. Each file is looked at again under the writer
// lock, because a Put or Delete may have handled it since the scan.
func (s *Store) syncBatch(paths []string) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed.Load() {
		return ErrClosed
	}
	b := s.newBatch()
	rejects := map[string]fileStat{}
	for _, p := range paths {
		old, indexed := b.previous(p)
		fi, err := s.docs.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			b.remove(p)
			continue
		} else if err != nil {
			return fmt.Errorf("rag: stat %s: %w", p, err)
		}
		if !fi.Mode().IsRegular() {
			b.remove(p)
			continue
		}
		st := fileStat{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
		if indexed && old.Size == st.size && old.ModTime == st.mtime {
			continue
		}
		reject := func(why string) {
			s.log.Warn("rag: file not indexed", "path", p, "reason", why)
			rejects[p] = st
			b.remove(p)
		}
		if st.size > int64(s.opts.MaxDocBytes) {
			reject(fmt.Sprintf("larger than %d bytes", s.opts.MaxDocBytes))
			continue
		}
		content, err := s.docs.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			b.remove(p)
			continue
		} else if err != nil {
			return fmt.Errorf("rag: read %s: %w", p, err)
		}
		if err := validateContent(content, s.opts.MaxDocBytes); err != nil {
			reject(err.Error())
			continue
		}
		e := entry{Path: p, Size: st.size, ModTime: st.mtime}
		if indexed && old.Hash == hashHex(content) {
			old.Size, old.ModTime = st.size, st.mtime
			if err := b.touch(old); err != nil {
				return err
			}
			continue
		}
		if err := b.add(e, content); err != nil {
			return err
		}
	}
	if err := b.commit(); err != nil {
		return err
	}
	s.mmu.Lock()
	for p, st := range rejects {
		s.rejected[p] = st
	}
	s.mmu.Unlock()
	return nil
}

// scan lists the indexable files under docs/ with their size and time. It descends only into folders of the
// layout (org id, project id or _org, known collection), skips hidden entries, symbolic links and names the
// store would refuse, so a file copied in by hand is found exactly where Put would have written it.
func (s *Store) scan() (map[string]fileStat, error) {
	files := map[string]fileStat{}
	err := fs.WalkDir(s.docs.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return err
			}
			s.log.Warn("rag: scan", "path", p, "err", err.Error())
			return nil
		}
		if p == "." {
			return nil
		}
		depth := strings.Count(p, "/")
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			ok := true
			switch depth {
			case 0:
				ok = idPattern.MatchString(d.Name())
			case 1:
				ok = d.Name() == orgFolder || idPattern.MatchString(d.Name())
			case 2:
				ok = validateCollection(d.Name()) == nil
			default:
				ok = depth < 2+maxNameSegments
			}
			if !ok {
				return fs.SkipDir
			}
			return nil
		}
		if depth < 3 || !d.Type().IsRegular() {
			return nil
		}
		if validateName(strings.SplitN(p, "/", 4)[3]) != nil {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		files[p] = fileStat{size: info.Size(), mtime: info.ModTime().UnixNano()}
		return nil
	})
	return files, err
}
