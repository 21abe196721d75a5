package vault

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Inspect checks, without writing anything, that the vault under dir opens
// with passphrase: it reports (false, nil) when no keyring exists yet (the
// server creates one on first start) and the reason when it cannot be read.
func Inspect(dir, passphrase string) (exists bool, err error) {
	data, err := readLimited(filepath.Join(dir, keyringFile), maxKeyringFile)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return true, fmt.Errorf("vault: read keyring: %w", err)
	}
	if isAgeFile(data) {
		if passphrase == "" {
			return true, ErrPassphraseRequired
		}
		if data, err = unwrapKeyring(data, passphrase); err != nil {
			return true, err
		}
	}
	_, err = parseKeyring(data)
	return true, err
}
