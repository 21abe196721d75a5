package rag

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"time"
)

// Doc is a document as the store knows it. Content is the whole file (front matter included) and is only
// filled by Get and Put; List leaves it empty.
type Doc struct {
	Scope      Scope
	Collection string
	Name       string
	Title      string
	Tags       []string
	Size       int64
	ModTime    time.Time
	SHA256     string
	Content    []byte
}

// Put writes a document to its file atomically (temporary file, fsync, rename, fsync of the directory) and
// indexes it before returning: once Put returns, the document survives a crash and is searchable. Tags nil
// keeps the tags of the content's own front matter; non-nil replaces them (empty removes them).
func (s *Store) Put(ctx context.Context, scope Scope, collection, name string, content []byte, tags []string) (Doc, error) {
	return s.put(ctx, scope, collection, name, content, tags, false)
}

// Create is Put for a new document: it fails with ErrExists, and writes nothing, when the scope has a
// document of that name, checked in the same step as the write (on a cluster, two servers creating one
// name at once do not overwrite each other).
func (s *Store) Create(ctx context.Context, scope Scope, collection, name string, content []byte, tags []string) (Doc, error) {
	return s.put(ctx, scope, collection, name, content, tags, true)
}

func (s *Store) put(ctx context.Context, scope Scope, collection, name string, content []byte, tags []string, create bool) (Doc, error) {
	if err := s.await(ctx); err != nil {
		return Doc{}, err
	}
	if err := s.validate(scope, collection, name); err != nil {
		return Doc{}, err
	}
	if err := validateContent(content, s.opts.MaxDocBytes); err != nil {
		return Doc{}, err
	}
	if tags != nil {
		norm, err := normalizeTags(tags)
		if err != nil {
			return Doc{}, err
		}
		if content, err = withTags(content, norm); err != nil {
			return Doc{}, invalid(ErrNotText, "content", "%v", err)
		}
		if err := validateContent(content, s.opts.MaxDocBytes); err != nil {
			return Doc{}, err
		}
	}
	block, _, _ := splitFrontMatter(content)
	m, err := parseMeta(block)
	if err != nil {
		return Doc{}, invalid(ErrNotText, "content", "%v", err)
	}
	if m.Tags, err = normalizeTags(m.Tags); err != nil {
		return Doc{}, err
	}
	if err := ctx.Err(); err != nil {
		return Doc{}, err
	}
	if s.src != nil {
		return s.putShared(ctx, scope, collection, name, content, m, create)
	}

	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed.Load() {
		return Doc{}, ErrClosed
	}
	rel := path.Join(collection, name)
	pr, err := s.projectRoot(scope, true)
	if err != nil {
		return Doc{}, err
	}
	defer pr.Close()
	if create {
		if _, err := pr.Lstat(rel); err == nil {
			return Doc{}, &Error{Kind: ErrExists, Field: "name", Detail: name}
		}
	}
	if err := writeAtomic(pr, rel, content); err != nil {
		return Doc{}, fmt.Errorf("rag: write %s: %w", rel, err)
	}
	fi, err := pr.Lstat(rel)
	if err != nil {
		return Doc{}, fmt.Errorf("rag: write %s: %w", rel, err)
	}
	e := entry{Path: path.Join(scope.folder(), rel), Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}
	b := s.newBatch()
	if err := b.add(e, content); err != nil {
		return Doc{}, err
	}
	if err := b.commit(); err != nil {
		return Doc{}, err
	}
	doc := docFromEntry(b.entries[0])
	doc.Content = content
	return doc, nil
}

// Get reads one document of exactly this scope (a project's own, or the organization's when ProjectID is
// empty) from its file.
func (s *Store) Get(ctx context.Context, scope Scope, collection, name string) (Doc, error) {
	if err := s.await(ctx); err != nil {
		return Doc{}, err
	}
	if err := s.validate(scope, collection, name); err != nil {
		return Doc{}, err
	}
	if s.closed.Load() {
		return Doc{}, ErrClosed
	}
	if s.src != nil {
		return s.getShared(ctx, scope, collection, name)
	}
	pr, err := s.projectRoot(scope, false)
	if err != nil {
		return Doc{}, err
	}
	defer pr.Close()
	rel := path.Join(collection, name)
	fi, err := pr.Lstat(rel)
	if err != nil || !fi.Mode().IsRegular() {
		return Doc{}, notFound(name)
	}
	content, err := pr.ReadFile(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return Doc{}, notFound(name)
	} else if err != nil {
		return Doc{}, fmt.Errorf("rag: read %s: %w", rel, err)
	}
	block, body, _ := splitFrontMatter(content)
	m, _ := parseMeta(block)
	m.Tags, _ = normalizeTags(m.Tags)
	title, _ := s.chunker.split(name, m.Title, string(body))
	sum := sha256.Sum256(content)
	return Doc{
		Scope: scope, Collection: collection, Name: name, Title: title, Tags: m.Tags,
		Size: fi.Size(), ModTime: fi.ModTime().UTC(), SHA256: hex.EncodeToString(sum[:]), Content: content,
	}, nil
}

// List returns the documents of one collection of exactly this scope, sorted by name, as last indexed
// (a file edited by hand since then shows its new size and time once the next Sync has run).
func (s *Store) List(ctx context.Context, scope Scope, collection string) ([]Doc, error) {
	if err := s.await(ctx); err != nil {
		return nil, err
	}
	if err := validateScope(scope); err != nil {
		return nil, err
	}
	if err := validateCollection(collection); err != nil {
		return nil, err
	}
	if s.closed.Load() {
		return nil, ErrClosed
	}
	if s.src != nil {
		return s.listShared(ctx, scope, collection)
	}
	prefix := path.Join(scope.folder(), collection) + "/"
	s.mmu.RLock()
	var docs []Doc
	for p, e := range s.manifest {
		if strings.HasPrefix(p, prefix) {
			docs = append(docs, docFromEntry(e))
		}
	}
	s.mmu.RUnlock()
	slices.SortFunc(docs, func(a, b Doc) int { return strings.Compare(a.Name, b.Name) })
	return docs, nil
}

// Delete removes a document's file (fsyncing its directory) and its chunks from the index.
func (s *Store) Delete(ctx context.Context, scope Scope, collection, name string) error {
	if err := s.await(ctx); err != nil {
		return err
	}
	if err := s.validate(scope, collection, name); err != nil {
		return err
	}
	if s.src != nil {
		if s.closed.Load() {
			return ErrClosed
		}
		return s.deleteShared(ctx, scope, collection, name)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed.Load() {
		return ErrClosed
	}
	rel := path.Join(collection, name)
	p := path.Join(scope.folder(), rel)
	s.mmu.RLock()
	_, indexed := s.manifest[p]
	s.mmu.RUnlock()
	pr, err := s.projectRoot(scope, false)
	if err != nil && !indexed {
		return err
	}
	if err == nil {
		defer pr.Close()
		switch err := pr.Remove(rel); {
		case errors.Is(err, fs.ErrNotExist):
			if !indexed {
				return notFound(name)
			}
		case err != nil:
			return fmt.Errorf("rag: delete %s: %w", rel, err)
		default:
			if err := syncDir(pr, path.Dir(rel)); err != nil {
				return fmt.Errorf("rag: delete %s: %w", rel, err)
			}
		}
	}
	b := s.newBatch()
	b.remove(p)
	return b.commit()
}

func (s *Store) validate(scope Scope, collection, name string) error {
	if err := validateScope(scope); err != nil {
		return err
	}
	if err := validateCollection(collection); err != nil {
		return err
	}
	return validateName(name)
}

// projectRoot opens the scope's folder as its own root, so that no operation through it, symbolic links
// included, reaches outside the project.
func (s *Store) projectRoot(scope Scope, create bool) (*os.Root, error) {
	folder := scope.folder()
	if create {
		if err := s.docs.MkdirAll(folder, 0o700); err != nil {
			return nil, fmt.Errorf("rag: %w", err)
		}
	}
	r, err := s.docs.OpenRoot(folder)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &Error{Kind: ErrNotFound, Field: "name"}
	} else if err != nil {
		return nil, fmt.Errorf("rag: %w", err)
	}
	return r, nil
}

func notFound(name string) error {
	return &Error{Kind: ErrNotFound, Field: "name", Detail: name}
}

// writeAtomic replaces rel under r with content: a hidden temporary file in the same directory is written
// and fsynced, renamed over rel, and the directory fsynced, so a crash leaves the old or the new file.
func writeAtomic(r *os.Root, rel string, content []byte) error {
	dir := path.Dir(rel)
	if err := r.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp := path.Join(dir, ".tmp-"+rand.Text()[:12]+"-"+path.Base(rel))
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(content)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = r.Rename(tmp, rel)
	}
	if err != nil {
		r.Remove(tmp)
		return err
	}
	return syncDir(r, dir)
}

func syncDir(r *os.Root, dir string) error {
	d, err := r.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

func docFromEntry(e entry) Doc {
	scope, collection, name, _ := location(e.Path)
	return Doc{
		Scope: scope, Collection: collection, Name: name, Title: e.Title, Tags: e.Tags,
		Size: e.Size, ModTime: time.Unix(0, e.ModTime).UTC(), SHA256: e.Hash,
	}
}
