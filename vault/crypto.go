package vault

import (
	"bytes"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"filippo.io/age"
)

// Size limits. Secrets are API keys, tokens, kubeconfigs and service-account
// files: kilobytes. The limits keep a damaged or hostile row from making the
// server allocate without bound.
const (
	// MaxPlaintextSize is the largest secret EncryptFor accepts.
	MaxPlaintextSize = 1 << 20
	// MaxAADSize is the largest associated data string.
	MaxAADSize = 1 << 10
	// maxCiphertextSize covers the age header (about 200 bytes per stanza),
	// the envelope and age's 16-byte tag per 64 KiB chunk, with room to spare.
	maxCiphertextSize = MaxPlaintextSize + MaxAADSize + 64<<10
)

// envelopeVersion starts the envelope that age encrypts:
//
//	version (1 byte) | uvarint len(aad) | aad | plaintext
//
// age authenticates the whole envelope, so the aad cannot be changed or
// stripped without the decryption failing.
const envelopeVersion = 1

// Encrypt encrypts plaintext to the current key with no associated data and
// returns the ciphertext (a binary age file) and the id of the key used.
// Prefer EncryptFor wherever the ciphertext has a home.
func (v *Vault) Encrypt(plaintext []byte) ([]byte, string, error) {
	return v.EncryptFor("", plaintext)
}

// Decrypt decrypts a ciphertext made by Encrypt. A ciphertext made by
// EncryptFor with a non-empty aad fails with ErrAADMismatch.
func (v *Vault) Decrypt(ciphertext []byte) ([]byte, error) {
	return v.DecryptFor("", ciphertext)
}

// EncryptFor encrypts plaintext to the current key, bound to aad: the string
// that names where the ciphertext lives (for example
// "org:<org-id>/secret:<name>"). Only DecryptFor with the same aad opens it.
// It returns the ciphertext and the id of the key used, which the caller may
// store beside it to know what to re-encrypt before Retire.
func (v *Vault) EncryptFor(aad string, plaintext []byte) ([]byte, string, error) {
	if len(plaintext) > MaxPlaintextSize {
		return nil, "", fmt.Errorf("%w: secret of %d bytes, limit %d", ErrTooLarge, len(plaintext), MaxPlaintextSize)
	}
	if len(aad) > MaxAADSize {
		return nil, "", fmt.Errorf("%w: associated data of %d bytes, limit %d", ErrTooLarge, len(aad), MaxAADSize)
	}
	env := make([]byte, 0, 1+binary.MaxVarintLen64+len(aad)+len(plaintext))
	env = append(env, envelopeVersion)
	env = binary.AppendUvarint(env, uint64(len(aad)))
	env = append(env, aad...)
	env = append(env, plaintext...)
	defer clear(env)
	return v.seal(env)
}

// DecryptFor decrypts a ciphertext made by EncryptFor with the same aad, using
// whichever key in the keyring opens it.
func (v *Vault) DecryptFor(aad string, ciphertext []byte) ([]byte, error) {
	env, err := v.unseal(ciphertext)
	if err != nil {
		return nil, err
	}
	defer clear(env)
	gotAAD, plaintext, err := splitEnvelope(env)
	if err != nil {
		return nil, err
	}
	if subtle.ConstantTimeCompare(gotAAD, []byte(aad)) != 1 {
		return nil, ErrAADMismatch
	}
	return bytes.Clone(plaintext), nil
}

// Reencrypt re-encrypts a ciphertext to the current key, keeping its
// associated data, so the caller needs neither the plaintext nor the aad. Run
// it over every row after Rotate, then Retire the old key.
func (v *Vault) Reencrypt(ciphertext []byte) ([]byte, string, error) {
	env, err := v.unseal(ciphertext)
	if err != nil {
		return nil, "", err
	}
	defer clear(env)
	if _, _, err := splitEnvelope(env); err != nil {
		return nil, "", err
	}
	return v.seal(env)
}

// seal age-encrypts an envelope to the current key.
func (v *Vault) seal(env []byte) ([]byte, string, error) {
	cur := v.snapshot().current()
	var out bytes.Buffer
	out.Grow(len(env) + 256)
	w, err := age.Encrypt(&out, cur.recipient)
	if err != nil {
		return nil, "", fmt.Errorf("vault: encrypt: %w", err)
	}
	if _, err := w.Write(env); err != nil {
		return nil, "", fmt.Errorf("vault: encrypt: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, "", fmt.Errorf("vault: encrypt: %w", err)
	}
	return out.Bytes(), cur.id, nil
}

// unseal age-decrypts a ciphertext with any key in the keyring.
func (v *Vault) unseal(ciphertext []byte) ([]byte, error) {
	if len(ciphertext) > maxCiphertextSize {
		return nil, fmt.Errorf("%w: ciphertext of %d bytes", ErrTooLarge, len(ciphertext))
	}
	r, err := age.Decrypt(bytes.NewReader(ciphertext), v.snapshot().identities()...)
	if err != nil {
		var noMatch *age.NoIdentityMatchError
		if errors.As(err, &noMatch) {
			return nil, ErrNoMatchingKey
		}
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	env, err := io.ReadAll(io.LimitReader(r, maxCiphertextSize))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return env, nil
}

// splitEnvelope parses the decrypted envelope. Since age authenticated it, a
// failure here means a ciphertext that this package did not make.
func splitEnvelope(env []byte) (aad, plaintext []byte, err error) {
	if len(env) == 0 || env[0] != envelopeVersion {
		return nil, nil, fmt.Errorf("%w: unknown envelope version", ErrMalformed)
	}
	n, size := binary.Uvarint(env[1:])
	if size <= 0 || n > MaxAADSize || uint64(len(env)-1-size) < n {
		return nil, nil, fmt.Errorf("%w: bad envelope", ErrMalformed)
	}
	rest := env[1+size:]
	return rest[:n], rest[n:], nil
}
