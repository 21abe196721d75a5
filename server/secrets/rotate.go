package secrets

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"

	"github.com/opsagent/opsagent/store"
	"github.com/opsagent/opsagent/vault"
)

// RotateReport says what a rotation did.
type RotateReport struct {
	NewKeyID     string   `json:"new_key_id"`
	Reencrypted  int      `json:"reencrypted"`
	Batches      int      `json:"batches"`
	RetiredKeyID []string `json:"retired_key_ids"`
}

// DefaultRotateBatch is how many ciphertexts one re-encryption transaction holds:
// small enough that the server's writes wait milliseconds, not seconds.
const DefaultRotateBatch = 25

// Rotate makes a new vault key current, re-encrypts every vault ciphertext
// of the database to it (every column store.CipherColumns lists: secrets,
// webhook signing secrets, ...) in batches of batch values (one write
// transaction each) and then retires the older keys. It is safe while a server (this process or another one on the
// same data directory) keeps serving: every writer reloads a changed keyring
// inside its write transaction before encrypting, so once a batch finds no
// stale row in its transaction, no later write can produce one, and retiring
// the old keys loses nothing. If a row cannot be re-encrypted the rotation
// stops before retiring anything.
func (k *Keeper) Rotate(ctx context.Context, batch int) (*RotateReport, error) {
	if batch <= 0 {
		batch = DefaultRotateBatch
	}
	v, err := k.Vault()
	if err != nil {
		return nil, err
	}
	old := v.KeyIDs()
	newID, err := v.Rotate()
	if err != nil {
		return nil, err
	}
	k.noteKeyringWritten()
	rep := &RotateReport{NewKeyID: newID, RetiredKeyID: []string{}}
	if err := k.reencryptAll(ctx, v, newID, batch, rep); err != nil {
		return rep, err
	}
	for _, id := range old {
		if err := v.Retire(id); err != nil && !errors.Is(err, vault.ErrUnknownKey) {
			return rep, err
		}
		k.noteKeyringWritten()
		rep.RetiredKeyID = append(rep.RetiredKeyID, id)
	}
	k.log.Info("secrets: vault key rotated", "new_key_id", newID, "reencrypted", rep.Reencrypted, "retired", rep.RetiredKeyID)
	return rep, nil
}

// reencryptAll re-encrypts every ciphertext not made with key to, in
// batches, until a batch finds none.
func (k *Keeper) reencryptAll(ctx context.Context, v *vault.Vault, to string, batch int, rep *RotateReport) error {
	for {
		n, err := k.db.Reencrypt(ctx, to, batch, func(st store.StaleCiphertext) ([]byte, string, error) {
			ct, kid, err := v.Reencrypt(st.CT)
			if err != nil {
				return nil, "", fmt.Errorf("secrets: re-encrypt %s.%s of row %s: %w", st.Column.Table, st.Column.CT, st.RowID, err)
			}
			return ct, kid, nil
		})
		if err != nil {
			return err
		}
		rep.Batches++
		rep.Reencrypted += n
		if n == 0 {
			return nil
		}
	}
}

// KeyUsage reports the vault's keys (oldest first, the last current) and how
// many stored ciphertexts (secrets, webhook secrets, ...) each encrypts.
func (k *Keeper) KeyUsage(ctx context.Context) (keys []string, counts map[string]int, err error) {
	v, err := k.Vault()
	if err != nil {
		return nil, nil, err
	}
	counts, err = k.db.CountCiphertextsByKey(ctx)
	return slices.Clone(v.KeyIDs()), counts, err
}

// RotateCommand is `opsagent vault rotate --data-dir D [--batch N]`. It may
// run while the server runs on the same directory (see Rotate). The
// passphrase comes from OPSAGENT_VAULT_PASSPHRASE like the server's. With
// --database-url (several servers on PostgreSQL) it is one step of three:
// --stage, then the promotion, then --retire (rotate_cluster.go).
func RotateCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	const usage = "usage: opsagent vault rotate --data-dir DIR [--batch N]\n" +
		"       opsagent vault rotate --data-dir DIR --database-url URL [--stage | --retire]   (several servers on PostgreSQL: --stage, then no flag, then --retire; copy DIR/vault/keyring to every server after each)"
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprintln(stdout, usage+"\n\nRe-encrypts every vault ciphertext under a new key; safe while the server runs.")
		return nil
	}
	if len(args) == 0 || args[0] != "rotate" {
		fmt.Fprintln(stderr, usage)
		return errors.New("unknown vault command")
	}
	fs := flag.NewFlagSet("vault rotate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	def := getenv("OPSAGENT_DATA_DIR")
	if def == "" {
		def = "./data"
	}
	dataDir := fs.String("data-dir", def, "data directory of the server (env OPSAGENT_DATA_DIR)")
	batch := fs.Int("batch", DefaultRotateBatch, "ciphertexts re-encrypted per transaction")
	dbURL := fs.String("database-url", getenv("OPSAGENT_DATABASE_URL"), "the servers' PostgreSQL database (env OPSAGENT_DATABASE_URL)")
	stage := fs.Bool("stage", false, "add the next key, decrypting only; copy the keyring to every server before the next step")
	retire := fs.Bool("retire", false, "re-encrypt what still uses an older key and retire the older keys")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	pass := getenv("OPSAGENT_VAULT_PASSPHRASE")
	dir := filepath.Join(*dataDir, "vault")
	v, err := vault.Open(dir, pass, logger)
	if err != nil {
		return fmt.Errorf("vault: %w", err)
	}
	if *stage {
		id, err := v.Stage()
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "staged key %s (decrypts; the current key %s still encrypts)\nstep 1 of 3 done: %s, then run `opsagent vault rotate` with --database-url.\n", id, v.CurrentKeyID(), copyKeyring)
		return nil
	}
	dbPath := filepath.Join(*dataDir, "opsagent.db")
	if *dbURL == "" {
		// Opening a missing file would create an empty database: nothing
		// re-encrypted, then the old key retired, and a server whose state
		// is in PostgreSQL could no longer read a single secret.
		if _, err := os.Stat(dbPath); err != nil {
			return fmt.Errorf("vault rotate: no database at %s (%v); a server on PostgreSQL: pass --database-url (or OPSAGENT_DATABASE_URL)", dbPath, err)
		}
	}
	db, err := store.OpenURL(ctx, dbPath, *dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	k := New(db, v, dir, pass, logger)
	if *dbURL != "" || *retire {
		return rotateCluster(ctx, k, v, *retire, *batch, stdout)
	}
	rep, err := k.Rotate(ctx, *batch)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "new key %s; re-encrypted %d ciphertexts in %d batches; retired %v\n",
		rep.NewKeyID, rep.Reencrypted, rep.Batches, rep.RetiredKeyID)
	return nil
}
