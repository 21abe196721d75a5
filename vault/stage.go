package vault

import (
	"errors"
	"fmt"
)

// stagedComment marks a staged key in the keyring file.
const stagedComment = "# staged: decrypts, not yet current (opsagent vault rotate)"

// ErrNoStagedKey: Promote found no staged key.
var ErrNoStagedKey = errors.New("vault: no staged key")

// Stage adds a new key that decrypts but does not encrypt yet: the current
// key stays current. Several servers sharing one database (PostgreSQL) each
// read their own copy of the keyring; a key used to encrypt before every
// server holds it would make values unreadable on the others, so a cluster's
// rotation stages the key, copies the keyring to every server, and only then
// promotes it (Promote).
func (v *Vault) Stage() (string, error) {
	v.writeMu.Lock()
	defer v.writeMu.Unlock()
	old := v.snapshot()
	k, err := newKey(old)
	if err != nil {
		return "", err
	}
	k.staged = true
	n := len(old.keys)
	keys := append(append(append([]key(nil), old.keys[:n-1]...), k), old.keys[n-1])
	next := &keyring{keys: keys}
	if err := v.persist(next); err != nil {
		return "", fmt.Errorf("vault: stage: %w", err)
	}
	v.publish(next)
	v.logger.Info("vault: staged a key", "key_id", k.id, "current_key_id", old.current().id)
	return k.id, nil
}

// StagedKeyIDs lists the staged keys, oldest first.
func (v *Vault) StagedKeyIDs() []string {
	var ids []string
	for _, k := range v.snapshot().keys {
		if k.staged {
			ids = append(ids, k.id)
		}
	}
	return ids
}

// Promote makes the newest staged key current (the previous current key
// still decrypts) and returns its id; ErrNoStagedKey when there is none.
func (v *Vault) Promote() (string, error) {
	v.writeMu.Lock()
	defer v.writeMu.Unlock()
	old := v.snapshot()
	at := -1
	for i, k := range old.keys {
		if k.staged {
			at = i
		}
	}
	if at < 0 {
		return "", ErrNoStagedKey
	}
	k := old.keys[at]
	k.staged = false
	next := &keyring{}
	for i, o := range old.keys {
		if i != at {
			next.keys = append(next.keys, o)
		}
	}
	next.keys = append(next.keys, k)
	if err := v.persist(next); err != nil {
		return "", fmt.Errorf("vault: promote: %w", err)
	}
	v.publish(next)
	v.logger.Info("vault: promoted the staged key", "key_id", k.id, "previous_key_id", old.current().id)
	return k.id, nil
}
