package backup

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// BackupCommand is `opsagent backup --data-dir D --out FILE`. It may run
// while the server runs. The archive is written beside FILE and renamed into
// place once complete, mode 0600.
func BackupCommand(ctx context.Context, args []string, getenv func(string) string, version string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data-dir", defaultDataDir(getenv), "data directory of the server (env OPSAGENT_DATA_DIR)")
	out := fs.String("out", "", "archive to write (.tar.gz)")
	dbURL := fs.String("database-url", getenv("OPSAGENT_DATABASE_URL"), "the server's PostgreSQL database (env OPSAGENT_DATABASE_URL): refused, see below")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dbURL != "" {
		// The archive holds a SQLite file; a cluster's state is in PostgreSQL,
		// whose own tools make a consistent copy of it.
		return errors.New("backup: the state is in PostgreSQL (--database-url / OPSAGENT_DATABASE_URL), which opsagent backup does not archive: " +
			"back up the database with pg_dump (e.g. pg_dump -Fc -f opsagent.dump DBNAME) or your PostgreSQL's own backups, " +
			"and keep a copy of one server's DATA_DIR/vault/ and keys/ (the ciphertexts in the database are useless without the vault identity)")
	}
	if *out == "" {
		return errors.New("backup: --out is required")
	}
	f, err := os.CreateTemp(filepath.Dir(*out), ".opsagent-backup-*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after the rename
	m, err := Create(ctx, *dataDir, version, f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, *out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "backup written to %s: %d files, %d bytes (database %d bytes)\n", *out, m.Files, m.Bytes, m.DBBytes)
	return nil
}

// RestoreCommand is `opsagent restore --in FILE --data-dir NEWDIR`; NEWDIR
// must not exist or be empty. Start the server on it afterwards (with the
// same OPSAGENT_VAULT_PASSPHRASE if the backed-up server had one).
func RestoreCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	in := fs.String("in", "", "archive made by opsagent backup")
	dataDir := fs.String("data-dir", "", "new, empty data directory to restore into")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" || *dataDir == "" {
		return errors.New("restore: --in and --data-dir are required")
	}
	f, err := os.Open(*in)
	if err != nil {
		return err
	}
	defer f.Close()
	m, err := Restore(ctx, f, *dataDir)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "restored %d files (backup of %s, version %s) into %s\n", m.Files, m.CreatedAt.Format("2006-01-02T15:04:05Z"), m.Version, *dataDir)
	return nil
}

func defaultDataDir(getenv func(string) string) string {
	if d := getenv("OPSAGENT_DATA_DIR"); d != "" {
		return d
	}
	return "./data"
}
