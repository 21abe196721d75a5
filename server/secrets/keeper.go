// Package secrets stores the platform's secrets: values are encrypted with the
// vault inside the same SQLite transaction that writes their row, bound to the
// row's org, project, kind and name, and decrypted only for the agent (Resolve)
// or the LLM client (LLMKey). No route reveals a value.
//
// The keeper notices when the keyring file changes under it (a rotation run by
// `opsagent vault rotate` in another process) and reloads it inside the write
// transaction before encrypting, which is what lets a rotation run while the
// server serves: see Rotate.
package secrets

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/opsagent/opsagent/store"
	"github.com/opsagent/opsagent/vault"
)

// Keeper encrypts, stores and resolves secrets. Safe for concurrent use.
type Keeper struct {
	db         *store.DB
	dir        string
	passphrase string
	log        *slog.Logger

	mu     sync.Mutex
	v      *vault.Vault
	loaded os.FileInfo // the keyring file v was loaded from
}

// New returns a keeper over db and the opened vault v, whose directory is dir
// (opened with passphrase, needed to reload it after an outside rotation).
func New(db *store.DB, v *vault.Vault, dir, passphrase string, logger *slog.Logger) *Keeper {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	k := &Keeper{db: db, v: v, dir: dir, passphrase: passphrase, log: logger}
	k.loaded, _ = os.Stat(k.keyringPath())
	return k
}

func (k *Keeper) keyringPath() string { return filepath.Join(k.dir, "keyring") }

// Vault returns the vault, reloaded first when another process rewrote the
// keyring (every write of it is an atomic rename, so a new inode).
func (k *Keeper) Vault() (*vault.Vault, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	fi, err := os.Stat(k.keyringPath())
	if err != nil || (k.loaded != nil && os.SameFile(fi, k.loaded) && fi.ModTime().Equal(k.loaded.ModTime()) && fi.Size() == k.loaded.Size()) {
		return k.v, nil
	}
	v, err := vault.Open(k.dir, k.passphrase, k.log)
	if err != nil {
		return nil, fmt.Errorf("secrets: reload the vault keyring: %w", err)
	}
	k.v, k.loaded = v, fi
	k.log.Info("secrets: vault keyring reloaded", "current_key_id", v.CurrentKeyID())
	return v, nil
}

// noteKeyringWritten records that this process itself rewrote the keyring.
func (k *Keeper) noteKeyringWritten() {
	k.mu.Lock()
	k.loaded, _ = os.Stat(k.keyringPath())
	k.mu.Unlock()
}

// Seal encrypts plaintext to the current vault key, bound to aad, and
// returns the ciphertext with the key's id (store it in the column's key-id
// column, see store.CipherColumns). Call it inside the write transaction that
// stores the ciphertext: the keyring is reloaded there when a rotation in
// another process changed it, which is what Rotate relies on to miss nothing.
func (k *Keeper) Seal(aad string, plaintext []byte) (ct []byte, keyID string, err error) {
	v, err := k.Vault()
	if err != nil {
		return nil, "", err
	}
	return v.EncryptFor(aad, plaintext)
}

// Unseal decrypts a ciphertext made by Seal with the same aad. After
// vault.ErrNoMatchingKey the caller should read the row again and retry
// once: a rotation may have re-encrypted it and retired the key in between.
func (k *Keeper) Unseal(aad string, ct []byte) ([]byte, error) {
	v, err := k.Vault()
	if err != nil {
		return nil, err
	}
	return v.DecryptFor(aad, ct)
}

// AAD is the associated data binding a ciphertext to its row: moved to any
// other org, project, kind or name it no longer decrypts.
func AAD(orgID, projectID, kind, name string) string {
	if projectID == "" {
		projectID = "-"
	}
	return "secret/v1 org:" + orgID + " project:" + projectID + " kind:" + kind + " name:" + name
}

// PutInput is a secret to create or replace. ProjectID "" is org-wide.
type PutInput struct {
	OrgID, ProjectID string
	Kind, Name       string
	Description      string
	Meta             string // JSON object of non-secret fields, "" for {}
	Value            []byte
	ActorID          string
}

// Put encrypts in.Value and creates or replaces the secret; it reports
// whether the secret is new. The returned record carries no ciphertext.
func (k *Keeper) Put(ctx context.Context, in PutInput) (*store.Secret, bool, error) {
	if in.Kind == "" {
		in.Kind = store.SecretKindEnv
	}
	if err := vault.ValidateName(in.Name); err != nil && in.Kind == store.SecretKindEnv {
		return nil, false, &store.Error{Code: store.EInvalid, Message: err.Error(), Reason: "invalid_secret_name"}
	}
	s := &store.Secret{OrgID: in.OrgID, ProjectID: in.ProjectID, Kind: in.Kind, Name: in.Name,
		Description: in.Description, Meta: in.Meta, CreatedBy: in.ActorID, UpdatedBy: in.ActorID}
	// Encrypted inside the store's transaction: a rotation's final pass
	// either sees this row or ran before this reload of the vault.
	created, err := k.db.PutSecret(ctx, s, func() ([]byte, string, error) {
		v, err := k.Vault()
		if err != nil {
			return nil, "", err
		}
		ct, kid, err := v.EncryptFor(AAD(s.OrgID, s.ProjectID, s.Kind, s.Name), in.Value)
		if errors.Is(err, vault.ErrTooLarge) {
			return nil, "", &store.Error{Code: store.ETooLarge, Message: "secret value too large", Reason: "secret_too_large"}
		}
		return ct, kid, err
	})
	s.Ciphertext = nil
	if err != nil {
		return nil, false, err
	}
	return s, created, nil
}

// Delete removes one secret of exactly this scope.
func (k *Keeper) Delete(ctx context.Context, orgID, projectID, kind, name string) error {
	return k.db.DeleteSecret(ctx, orgID, projectID, kind, name)
}

// List returns the secrets of one kind in exactly this scope, without values.
func (k *Keeper) List(ctx context.Context, orgID, projectID, kind string) ([]store.Secret, error) {
	return k.db.FindSecrets(ctx, orgID, projectID, kind)
}

// Resolve returns the values of the environment secrets a project sees, by
// name: the project's own and its org's, a project secret overriding an org
// secret of the same name. With names, only those are returned (missing ones
// are simply absent). It stamps last_used_at. The agent calls it and must
// pass the values through vault.NewMasker before any output leaves it.
func (k *Keeper) Resolve(ctx context.Context, orgID, projectID string, names ...string) (map[string]string, error) {
	rows, err := k.decryptAll(ctx, orgID, projectID, store.SecretKindEnv, names)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(rows))
	ids := make([]string, 0, len(rows))
	for _, r := range rows {
		out[r.secret.Name] = string(r.value)
		ids = append(ids, r.secret.ID)
	}
	if err := k.db.TouchSecrets(ctx, ids); err != nil {
		k.log.Warn("secrets: could not stamp last use", "err", err)
	}
	return out, nil
}

// Values returns the value of every environment secret of the project and
// of its org, including an org secret a project secret of the same name
// overrides: what must be masked in anything the agent produces. It does
// not stamp last_used_at (nothing was used).
func (k *Keeper) Values(ctx context.Context, orgID, projectID string) ([]string, error) {
	var out []string
	for _, scope := range []string{projectID, ""} {
		rows, err := k.decryptAll(ctx, orgID, scope, store.SecretKindEnv, nil)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			out = append(out, string(r.value))
		}
	}
	return out, nil
}

type opened struct {
	secret store.Secret
	value  []byte
}

// decryptAll reads and decrypts the secrets a project sees. A rotation in
// another process may re-encrypt and retire a key between the read and the
// decryption: one retry with fresh rows and a reloaded keyring covers it.
func (k *Keeper) decryptAll(ctx context.Context, orgID, projectID, kind string, names []string) ([]opened, error) {
	var lastErr error
	for range 2 {
		rows, err := k.db.FindSecretsForProject(ctx, orgID, projectID, kind, names)
		if err != nil {
			return nil, err
		}
		v, err := k.Vault()
		if err != nil {
			return nil, err
		}
		out := make([]opened, 0, len(rows))
		for _, r := range rows {
			pt, err := v.DecryptFor(AAD(r.OrgID, r.ProjectID, r.Kind, r.Name), r.Ciphertext)
			if err != nil {
				lastErr = fmt.Errorf("secrets: decrypt %s: %w", r.Name, err)
				break
			}
			r.Ciphertext = nil
			out = append(out, opened{secret: r, value: pt})
		}
		if len(out) == len(rows) {
			return out, nil
		}
		if !errors.Is(lastErr, vault.ErrNoMatchingKey) {
			return nil, lastErr
		}
	}
	return nil, lastErr
}
