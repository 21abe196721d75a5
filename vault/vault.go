// Package vault keeps the platform's secrets encrypted at rest with age
// (filippo.io/age, X25519 recipients).
//
// The vault owns the key material and the cryptography, never the storage of
// ciphertexts: the server keeps those in SQLite rows, one transaction per
// request, and calls EncryptFor/DecryptFor with an associated-data string that
// names the row (for example "org:<id>/secret:<name>"), so a ciphertext copied
// into another row does not decrypt there.
//
// On disk the vault is one directory (DATA_DIR/vault, mode 0700) holding one
// file, "keyring" (mode 0600). The keyring is an age identity file: X25519
// secret keys, oldest first, the last one current. Without a passphrase the
// file is plain text and the age CLI reads it as is (age -d -i keyring), which
// is the disaster-recovery path. With a passphrase the whole file is
// age-encrypted to an scrypt recipient.
//
// Passphrase transitions, decided at Open:
//   - no keyring yet: a first key is generated and written, wrapped when a
//     passphrase is given;
//   - plain keyring and a passphrase: the keyring is wrapped in place with one
//     atomic rename, so a crash leaves either the old plain file or the new
//     wrapped one, never a mix (the old bytes may survive in free disk blocks
//     or older backups: rotate the keys if that matters);
//   - wrapped keyring and no passphrase: ErrPassphraseRequired, nothing is
//     touched (unwrapping is never implicit);
//   - wrapped keyring and a wrong passphrase: ErrWrongPassphrase, nothing is
//     touched.
//
// Rotation: Rotate appends a new current key; older keys keep decrypting, so
// the caller re-encrypts rows at its own pace (Reencrypt) and then calls
// Retire on the old key id. One process owns the directory at a time.
package vault

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Errors returned by the vault. Callers test them with errors.Is; the
// returned errors wrap them with detail that never includes secret material.
var (
	// ErrWrongPassphrase: the keyring is wrapped and the passphrase does not open it.
	ErrWrongPassphrase = errors.New("vault: wrong passphrase for the keyring")
	// ErrPassphraseRequired: the keyring is wrapped and no passphrase was given.
	ErrPassphraseRequired = errors.New("vault: keyring is passphrase-protected; set OPSAGENT_VAULT_PASSPHRASE")
	// ErrCorruptKeyring: the keyring file exists but cannot be read as a keyring.
	ErrCorruptKeyring = errors.New("vault: keyring file is corrupt")
	// ErrUnknownKey: no key with that id is in the keyring.
	ErrUnknownKey = errors.New("vault: unknown key id")
	// ErrRetireCurrent: the current key cannot be retired; Rotate first.
	ErrRetireCurrent = errors.New("vault: cannot retire the current key")
	// ErrNoMatchingKey: no key in the keyring opens the ciphertext (its key was
	// retired, or it comes from another installation).
	ErrNoMatchingKey = errors.New("vault: no key in the keyring opens this ciphertext")
	// ErrAADMismatch: the ciphertext is bound to another associated data string.
	ErrAADMismatch = errors.New("vault: ciphertext belongs to another context")
	// ErrMalformed: the ciphertext is not a vault ciphertext or was altered.
	ErrMalformed = errors.New("vault: malformed or altered ciphertext")
	// ErrTooLarge: a plaintext, associated data or ciphertext exceeds the limits.
	ErrTooLarge = errors.New("vault: value too large")
	// ErrInvalidName: a secret name is not usable as an environment variable name.
	ErrInvalidName = errors.New("vault: invalid secret name")
)

const (
	keyringFile = "keyring"
	// tempPattern names the temporary files of atomic writes; leftovers of a
	// crash may hold key material and are removed at the next Open.
	tempPattern = ".keyring-*.tmp"
	// tempGrace is how old a temporary file must be before tidy removes it.
	tempGrace = time.Minute
	// defaultScryptLogN is age's own default (about a second, 256 MiB), paid
	// once per Open and once per Rotate/Retire of a wrapped keyring.
	defaultScryptLogN = 18
)

// Vault holds the keyring in memory. It is safe for concurrent use; Rotate
// and Retire do not block Encrypt and Decrypt while they write the file.
type Vault struct {
	dir        string
	passphrase string
	scryptLogN int
	logger     *slog.Logger

	writeMu sync.Mutex // serialises Rotate and Retire (file writes)

	mu   sync.RWMutex
	ring *keyring // immutable once published; replaced whole
}

// Open loads the keyring under dir, creating dir and a first key when absent.
// passphrase is OPSAGENT_VAULT_PASSPHRASE ("" for none); logger may be nil.
// See the package documentation for the passphrase transitions.
func Open(dir, passphrase string, logger *slog.Logger) (*Vault, error) {
	return open(dir, passphrase, logger, defaultScryptLogN)
}

// open is Open with the scrypt cost as a parameter, so tests stay fast.
func open(dir, passphrase string, logger *slog.Logger, scryptLogN int) (*Vault, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if dir == "" {
		return nil, errors.New("vault: empty directory")
	}
	v := &Vault{dir: dir, passphrase: passphrase, scryptLogN: scryptLogN, logger: logger}
	path := filepath.Join(dir, keyringFile)

	data, err := readLimited(path, maxKeyringFile)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := v.create(); err != nil {
			return nil, err
		}
		v.tidy()
		return v, nil
	case err != nil:
		return nil, fmt.Errorf("vault: read keyring: %w", err)
	}

	wrapped := isAgeFile(data)
	if wrapped {
		if passphrase == "" {
			return nil, ErrPassphraseRequired
		}
		if data, err = unwrapKeyring(data, passphrase); err != nil {
			return nil, err
		}
	}
	ring, err := parseKeyring(data)
	if err != nil {
		return nil, err
	}
	v.ring = ring

	if !wrapped && passphrase != "" {
		if err := v.persist(ring); err != nil {
			return nil, fmt.Errorf("vault: wrap keyring with passphrase: %w", err)
		}
		logger.Info("vault: keyring wrapped with the passphrase", "dir", dir)
	}
	v.tidy()
	logger.Info("vault: opened", "dir", dir, "keys", len(ring.keys),
		"current_key_id", ring.current().id, "passphrase", passphrase != "")
	return v, nil
}

// create makes the directory and the first key of a fresh vault.
func (v *Vault) create() error {
	if err := os.MkdirAll(v.dir, 0o700); err != nil {
		return fmt.Errorf("vault: create directory: %w", err)
	}
	k, err := newKey(nil)
	if err != nil {
		return err
	}
	ring := &keyring{keys: []key{k}}
	if err := v.persist(ring); err != nil {
		return fmt.Errorf("vault: write first keyring: %w", err)
	}
	v.ring = ring
	v.logger.Info("vault: generated the first key", "dir", v.dir, "key_id", k.id,
		"passphrase", v.passphrase != "")
	return nil
}

// tidy runs only after a successful load: it tightens loose permissions and
// removes temporary files a crash may have left, which can hold keys.
func (v *Vault) tidy() {
	if fi, err := os.Stat(v.dir); err == nil && fi.Mode().Perm()&0o077 != 0 {
		v.logger.Warn("vault: directory was accessible to others; setting mode 0700", "dir", v.dir)
		_ = os.Chmod(v.dir, 0o700)
	}
	path := filepath.Join(v.dir, keyringFile)
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		v.logger.Warn("vault: keyring was accessible to others; setting mode 0600", "path", path)
		_ = os.Chmod(path, 0o600)
	}
	leftovers, _ := filepath.Glob(filepath.Join(v.dir, tempPattern))
	for _, p := range leftovers {
		// A fresh one may be another process's write in flight (`opsagent
		// vault rotate` while the server reloads): only a file left for a
		// while is a crash's leftover.
		if fi, err := os.Stat(p); err != nil || time.Since(fi.ModTime()) < tempGrace {
			continue
		}
		if err := os.Remove(p); err == nil {
			v.logger.Warn("vault: removed a temporary file left by an interrupted write", "path", p)
		}
	}
}

// persist writes ring to the keyring file atomically, wrapped when the vault
// has a passphrase.
func (v *Vault) persist(ring *keyring) error {
	data := ring.marshal()
	if v.passphrase != "" {
		var err error
		if data, err = wrapKeyring(data, v.passphrase, v.scryptLogN); err != nil {
			return err
		}
	}
	return writeFileAtomic(v.dir, keyringFile, data)
}

// snapshot returns the current keyring; it is never modified after publication.
func (v *Vault) snapshot() *keyring {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.ring
}

func (v *Vault) publish(ring *keyring) {
	v.mu.Lock()
	v.ring = ring
	v.mu.Unlock()
}

// CurrentKeyID returns the id of the key new ciphertexts are encrypted to.
func (v *Vault) CurrentKeyID() string { return v.snapshot().current().id }

// KeyIDs returns the ids of every key in the keyring, oldest first; the last
// one is current.
func (v *Vault) KeyIDs() []string {
	ring := v.snapshot()
	ids := make([]string, len(ring.keys))
	for i, k := range ring.keys {
		ids[i] = k.id
	}
	return ids
}

// Rotate adds a new key and makes it current. Older keys still decrypt, so
// there is no downtime; the new keyring is on disk before it is used, so no
// ciphertext is ever made with a key a restart would lose.
func (v *Vault) Rotate() (string, error) {
	v.writeMu.Lock()
	defer v.writeMu.Unlock()
	old := v.snapshot()
	k, err := newKey(old)
	if err != nil {
		return "", err
	}
	next := &keyring{keys: append(append([]key(nil), old.keys...), k)}
	if err := v.persist(next); err != nil {
		return "", fmt.Errorf("vault: rotate: %w", err)
	}
	v.publish(next)
	v.logger.Info("vault: rotated", "new_key_id", k.id, "previous_key_id", old.current().id)
	return k.id, nil
}

// Retire removes an old key once the caller has re-encrypted every ciphertext
// made with it; those that remain become undecryptable. The current key
// cannot be retired.
func (v *Vault) Retire(keyID string) error {
	v.writeMu.Lock()
	defer v.writeMu.Unlock()
	old := v.snapshot()
	if old.current().id == keyID {
		return ErrRetireCurrent
	}
	next := &keyring{}
	for _, k := range old.keys {
		if k.id != keyID {
			next.keys = append(next.keys, k)
		}
	}
	if len(next.keys) == len(old.keys) {
		return fmt.Errorf("%w: %q", ErrUnknownKey, keyID)
	}
	if err := v.persist(next); err != nil {
		return fmt.Errorf("vault: retire: %w", err)
	}
	v.publish(next)
	v.logger.Info("vault: retired a key", "key_id", keyID)
	return nil
}
