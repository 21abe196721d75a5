package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/opsagent/opsagent/rag"
	"github.com/opsagent/opsagent/server"
	"github.com/opsagent/opsagent/server/knowledge"
	"github.com/opsagent/opsagent/store"
)

// migrateToPostgres moves an appliance's database into an empty PostgreSQL
// database and verifies the copy (issue 20). The appliance must be stopped:
// what it writes during the copy would be missing from the target. The data
// directory keeps everything that is not in the database (vault identity,
// token signing key, knowledge files): every server of the cluster is given
// a copy of its vault/ and keys/ directories. The knowledge documents move
// into the database too: on PostgreSQL they are rows, and each server's
// DATA_DIR/rag holds only its index.
func migrateToPostgres(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("migrate-to-postgres", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data-dir", "./data", "the appliance's data directory (the server must be stopped)")
	dbURL := fs.String("database-url", "", "postgres://user:pass@host/db: an empty database to move into")
	if err := server.ApplyEnv(fs, getenv); err != nil {
		return err
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dbURL == "" {
		return errors.New("migrate-to-postgres: --database-url (or OPSAGENT_DATABASE_URL) is required")
	}
	path := filepath.Join(*dataDir, "opsagent.db")
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("migrate-to-postgres: %w", err)
	}
	src, err := store.Open(ctx, path)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := store.OpenPostgres(ctx, *dbURL)
	if err != nil {
		return err
	}
	defer dst.Close()
	rep, err := src.CopyTo(ctx, dst)
	if err != nil {
		return fmt.Errorf("migrate-to-postgres: %w", err)
	}
	var rows int64
	for _, t := range rep.Tables {
		fmt.Fprintf(stdout, "%-28s %8d %8d\n", t.Table, t.Source, t.Target)
		rows += t.Target
	}
	fmt.Fprintf(stdout, "copied %d rows in %d tables; audit chains verified: %d organizations (%d events); memory searches compared: %d\n",
		rows, len(rep.Tables), rep.Orgs, rep.AuditRows, rep.Searches)
	if !rep.OK() {
		for _, m := range rep.Mismatch {
			fmt.Fprintln(stderr, "mismatch:", m)
		}
		return errors.New("migrate-to-postgres: the copy does not match; do not switch to it")
	}
	docs, err := copyKnowledge(ctx, *dataDir, src, dst)
	if err != nil {
		return fmt.Errorf("migrate-to-postgres: %w", err)
	}
	fmt.Fprintf(stdout, "knowledge documents copied: %d; searches compared: %d\n", docs.Documents, docs.Searches)
	if !docs.OK() {
		for _, m := range docs.Mismatch {
			fmt.Fprintln(stderr, "mismatch:", m)
		}
		return errors.New("migrate-to-postgres: the knowledge documents do not match; do not switch to it")
	}
	fmt.Fprintf(stdout, "verified. Start every server with --database-url and a copy of %s and %s.\n",
		filepath.Join(*dataDir, "vault"), filepath.Join(*dataDir, "keys"))
	return nil
}

// copyKnowledge copies the appliance's knowledge documents (files under
// DATA_DIR/rag) into the database and verifies them with searches on an
// index built from the database alone (knowledge.CopyDocuments).
func copyKnowledge(ctx context.Context, dataDir string, src, dst *store.DB) (*knowledge.CopyReport, error) {
	files, err := rag.Open(ctx, filepath.Join(dataDir, "rag"), rag.Options{})
	if err != nil {
		return nil, err
	}
	defer files.Close()
	scratch, err := os.MkdirTemp("", "opsagent-migrate-rag-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	return knowledge.CopyDocuments(ctx, files, src, dst, scratch)
}
