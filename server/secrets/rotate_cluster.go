package secrets

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/opsagent/opsagent/vault"
)

// A cluster (several servers on one PostgreSQL database) rotates in three
// steps, because every server reads its own copy of DATA_DIR/vault/keyring
// (each reloads it when the file changes, see Keeper.Vault): a value must
// never be encrypted to a key some server lacks, and a key must not be
// retired while a server may still encrypt to it.
//
//  1. `vault rotate --stage`: a new key that decrypts but does not encrypt;
//     copy the keyring to every server.
//  2. `vault rotate --database-url URL`: the staged key becomes current here
//     and every ciphertext in the database is re-encrypted to it (the other
//     servers can read them: they hold the staged key); copy the keyring to
//     every server, which then encrypt to it too.
//  3. `vault rotate --retire --database-url URL`: what other servers wrote
//     to the old key before their copy arrived is re-encrypted, then the
//     old keys are retired; copy the keyring to every server.

// PromoteStaged is step 2: the newest staged key becomes current and every
// ciphertext is re-encrypted to it. Older keys are kept (step 3 retires them).
func (k *Keeper) PromoteStaged(ctx context.Context, batch int) (*RotateReport, error) {
	if batch <= 0 {
		batch = DefaultRotateBatch
	}
	v, err := k.Vault()
	if err != nil {
		return nil, err
	}
	id, err := v.Promote()
	if err != nil {
		return nil, err
	}
	k.noteKeyringWritten()
	rep := &RotateReport{NewKeyID: id, RetiredKeyID: []string{}}
	err = k.reencryptAll(ctx, v, id, batch, rep)
	k.log.Info("secrets: staged vault key promoted", "key_id", id, "reencrypted", rep.Reencrypted)
	return rep, err
}

// RetireOld is step 3: every ciphertext still made with an older key is
// re-encrypted to the current one, then the older keys (not the staged
// ones) are retired. Run it once every server holds the current key.
func (k *Keeper) RetireOld(ctx context.Context, batch int) (*RotateReport, error) {
	if batch <= 0 {
		batch = DefaultRotateBatch
	}
	v, err := k.Vault()
	if err != nil {
		return nil, err
	}
	cur := v.CurrentKeyID()
	rep := &RotateReport{NewKeyID: cur, RetiredKeyID: []string{}}
	if err := k.reencryptAll(ctx, v, cur, batch, rep); err != nil {
		return rep, err
	}
	staged := v.StagedKeyIDs()
	for _, id := range v.KeyIDs() {
		if id == cur || slices.Contains(staged, id) {
			continue
		}
		if err := v.Retire(id); err != nil && !errors.Is(err, vault.ErrUnknownKey) {
			return rep, err
		}
		k.noteKeyringWritten()
		rep.RetiredKeyID = append(rep.RetiredKeyID, id)
	}
	k.log.Info("secrets: old vault keys retired", "current_key_id", cur, "reencrypted", rep.Reencrypted, "retired", rep.RetiredKeyID)
	return rep, nil
}

const copyKeyring = "copy DATA_DIR/vault/keyring to every server now (write it beside the old one and rename it over it: each server reloads a changed keyring at once)"

// rotateCluster runs the step the flags and the keyring call for; see above.
func rotateCluster(ctx context.Context, k *Keeper, v *vault.Vault, retire bool, batch int, stdout io.Writer) error {
	if retire {
		rep, err := k.RetireOld(ctx, batch)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "current key %s; re-encrypted %d ciphertexts; retired %v\nstep 3 of 3 done: %s.\n", rep.NewKeyID, rep.Reencrypted, rep.RetiredKeyID, copyKeyring)
		return nil
	}
	if len(v.StagedKeyIDs()) == 0 {
		return errors.New("vault rotate: on PostgreSQL every server must hold the next key before any server encrypts with it: " +
			"run `opsagent vault rotate --stage --data-dir DIR` first, " + copyKeyring + ", then run this command again")
	}
	rep, err := k.PromoteStaged(ctx, batch)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "new current key %s; re-encrypted %d ciphertexts in %d batches\nstep 2 of 3 done: %s, then run `opsagent vault rotate --retire` with the same --data-dir and --database-url.\n",
		rep.NewKeyID, rep.Reencrypted, rep.Batches, copyKeyring)
	return nil
}
