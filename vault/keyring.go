package vault

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"filippo.io/age"
)

// maxKeyringFile bounds what Open reads; a key takes about 250 bytes.
const maxKeyringFile = 1 << 20

// ageIntro starts every binary age file, which is how a wrapped keyring is told
// apart from a plain one.
const ageIntro = "age-encryption.org/v1\n"

// key is one X25519 identity with its derived id.
type key struct {
	id        string
	created   time.Time // informative, kept in a comment; zero when unknown
	identity  *age.X25519Identity
	recipient *age.X25519Recipient
	// staged: decrypts but is not yet used to encrypt, wherever it sits
	// (Stage); kept as a comment line so the file stays an age identity file.
	staged bool
}

// keyring is an ordered list of keys, oldest first; the last is current.
// A published keyring is never modified.
type keyring struct {
	keys []key
}

func (r *keyring) current() key { return r.keys[len(r.keys)-1] }

// identities returns every identity, current first, since most ciphertexts
// were made with it and age tries identities in order.
func (r *keyring) identities() []age.Identity {
	ids := make([]age.Identity, 0, len(r.keys))
	for i := len(r.keys) - 1; i >= 0; i-- {
		ids = append(ids, r.keys[i].identity)
	}
	return ids
}

func (r *keyring) has(id string) bool {
	for _, k := range r.keys {
		if k.id == id {
			return true
		}
	}
	return false
}

// keyID derives a short stable id from the public key: the first 6 bytes of
// SHA-256 of the recipient string, in hex. It survives restarts without any
// metadata and reveals nothing about the secret key.
func keyID(r *age.X25519Recipient) string {
	sum := sha256.Sum256([]byte(r.String()))
	return hex.EncodeToString(sum[:6])
}

func keyFromIdentity(id *age.X25519Identity, created time.Time) key {
	r := id.Recipient()
	return key{id: keyID(r), created: created, identity: id, recipient: r}
}

// newKey generates a key whose id is not already in ring (which may be nil).
func newKey(ring *keyring) (key, error) {
	for range 4 {
		id, err := age.GenerateX25519Identity()
		if err != nil {
			return key{}, fmt.Errorf("vault: generate key: %w", err)
		}
		k := keyFromIdentity(id, time.Now().UTC().Truncate(time.Second))
		if ring == nil || !ring.has(k.id) {
			return k, nil
		}
	}
	return key{}, errors.New("vault: generate key: repeated key id collisions")
}

const keyringHeader = `# opsagent vault keyring: age X25519 identities, oldest first; the last one is current.
# The age CLI reads this file as is (age -d -i keyring). Do not edit it while the server runs.
`

// marshal writes the keyring in age identity-file syntax, with the metadata in
// comments the way age-keygen writes them.
func (r *keyring) marshal() []byte {
	var b bytes.Buffer
	b.WriteString(keyringHeader)
	for _, k := range r.keys {
		b.WriteString("\n# key id: " + k.id + "\n")
		if !k.created.IsZero() {
			b.WriteString("# created: " + k.created.Format(time.RFC3339) + "\n")
		}
		if k.staged {
			b.WriteString(stagedComment + "\n")
		}
		b.WriteString("# public key: " + k.recipient.String() + "\n")
		b.WriteString(k.identity.String() + "\n")
	}
	return b.Bytes()
}

// parseKeyring reads marshal's output, or any age identity file of X25519
// keys. Errors name line numbers only: a line may be a secret key.
func parseKeyring(data []byte) (*keyring, error) {
	ring := &keyring{}
	var created time.Time
	staged := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if c, ok := strings.CutPrefix(line, "# created:"); ok {
			created, _ = time.Parse(time.RFC3339, strings.TrimSpace(c))
			continue
		}
		if line == stagedComment {
			staged = true
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, err := age.ParseX25519Identity(line)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d is not an age X25519 secret key", ErrCorruptKeyring, n)
		}
		k := keyFromIdentity(id, created)
		k.staged = staged
		if ring.has(k.id) {
			return nil, fmt.Errorf("%w: line %d repeats key %s", ErrCorruptKeyring, n, k.id)
		}
		ring.keys = append(ring.keys, k)
		created, staged = time.Time{}, false
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorruptKeyring, err)
	}
	if len(ring.keys) == 0 {
		// Never regenerate here: a fresh key would orphan every ciphertext.
		return nil, fmt.Errorf("%w: no key in the file", ErrCorruptKeyring)
	}
	return ring, nil
}

func isAgeFile(data []byte) bool { return bytes.HasPrefix(data, []byte(ageIntro)) }

// wrapKeyring encrypts the keyring text to an scrypt recipient.
func wrapKeyring(plain []byte, passphrase string, logN int) ([]byte, error) {
	r, err := age.NewScryptRecipient(passphrase)
	if err != nil {
		return nil, fmt.Errorf("vault: passphrase: %w", err)
	}
	r.SetWorkFactor(logN)
	var out bytes.Buffer
	w, err := age.Encrypt(&out, r)
	if err != nil {
		return nil, fmt.Errorf("vault: wrap keyring: %w", err)
	}
	if _, err := w.Write(plain); err != nil {
		return nil, fmt.Errorf("vault: wrap keyring: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("vault: wrap keyring: %w", err)
	}
	return out.Bytes(), nil
}

// unwrapKeyring decrypts a wrapped keyring, telling a wrong passphrase apart
// from a damaged file.
func unwrapKeyring(data []byte, passphrase string) ([]byte, error) {
	id, err := age.NewScryptIdentity(passphrase)
	if err != nil {
		return nil, fmt.Errorf("vault: passphrase: %w", err)
	}
	r, err := age.Decrypt(bytes.NewReader(data), id)
	if errors.Is(err, age.ErrIncorrectIdentity) {
		return nil, ErrWrongPassphrase
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorruptKeyring, err)
	}
	plain, err := io.ReadAll(io.LimitReader(r, maxKeyringFile))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorruptKeyring, err)
	}
	return plain, nil
}

// readLimited reads a whole file, refusing ones larger than limit.
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrCorruptKeyring, limit)
	}
	return data, nil
}

// writeFileAtomic replaces dir/name with data (mode 0600): temporary file,
// fsync, rename, fsync of the directory. A crash leaves the old file or the
// new one, and at worst a temporary file that the next Open removes.
func writeFileAtomic(dir, name string, data []byte) (err error) {
	tmp, err := os.CreateTemp(dir, tempPattern) // created with mode 0600
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(0o600); err != nil {
		return err
	}
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir makes a rename durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
