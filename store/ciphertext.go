package store

import (
	"context"
	"slices"
)

// CipherColumn is one column of the schema that holds vault ciphertexts,
// with the column recording which vault key encrypted each value.
type CipherColumn struct {
	Table string // table name
	ID    string // column identifying the row
	CT    string // the ciphertext (NULL or empty: nothing stored)
	KeyID string // id of the vault key that encrypted CT
}

// cipherColumns is every vault-encrypted column of the product. A vault key
// rotation re-encrypts all of them before it retires the old keys, so a
// column missing here becomes undecryptable after the first rotation:
// TestCipherColumnsCoverSchema fails when a migration adds a ciphertext
// column (named ciphertext or *_ct) that is not listed.
var cipherColumns = []CipherColumn{
	{Table: "secrets", ID: "id", CT: "ciphertext", KeyID: "key_id"},
	{Table: "webhooks", ID: "task_id", CT: "secret_ct", KeyID: "secret_key_id"},
	{Table: "webhooks", ID: "task_id", CT: "prev_secret_ct", KeyID: "prev_secret_key_id"},
	{Table: "channels", ID: "id", CT: "credentials_ct", KeyID: "credentials_key_id"},
}

// CipherColumns returns every vault-encrypted column of the schema.
func CipherColumns() []CipherColumn { return slices.Clone(cipherColumns) }

// StaleCiphertext is one stored ciphertext not encrypted with the current
// vault key.
type StaleCiphertext struct {
	Column CipherColumn
	RowID  string
	CT     []byte
}

// Reencrypt rewrites, in one transaction, up to limit ciphertexts not
// encrypted with keyID (across every cipher column) with what reencrypt
// returns for each, and reports how many it rewrote: 0 when none is left.
func (db *DB) Reencrypt(ctx context.Context, keyID string, limit int, reencrypt func(StaleCiphertext) (ct []byte, keyID string, err error)) (int, error) {
	n := 0
	err := db.Write(ctx, func(tx *Tx) error {
		stale, err := staleCiphertextsTx(ctx, tx, keyID, limit)
		if err != nil {
			return err
		}
		for _, st := range stale {
			ct, kid, err := reencrypt(st)
			if err != nil {
				return err
			}
			if err := replaceCiphertextTx(ctx, tx, st, ct, kid); err != nil {
				return err
			}
		}
		n = len(stale)
		return nil
	})
	return n, err
}

// staleCiphertextsTx returns up to limit ciphertexts, across every cipher
// column, not encrypted with keyID: what a key rotation still has to
// re-encrypt. Table and column names come from the registry, never from
// input.
func staleCiphertextsTx(ctx context.Context, tx *Tx, keyID string, limit int) ([]StaleCiphertext, error) {
	var out []StaleCiphertext
	for _, c := range cipherColumns {
		if len(out) >= limit {
			break
		}
		rows, err := tx.QueryContext(ctx, `SELECT `+c.ID+`, `+c.CT+` FROM `+c.Table+`
			WHERE `+c.CT+` IS NOT NULL AND length(`+c.CT+`) > 0 AND `+c.KeyID+` != ? ORDER BY `+c.ID+` LIMIT ?`,
			keyID, limit-len(out))
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			s := StaleCiphertext{Column: c}
			if err := rows.Scan(&s.RowID, &s.CT); err != nil {
				rows.Close()
				return nil, err
			}
			out = append(out, s)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// replaceCiphertextTx stores a re-encrypted ciphertext in place of s (the
// value is unchanged, so no updated_at moves).
func replaceCiphertextTx(ctx context.Context, tx *Tx, s StaleCiphertext, ct []byte, keyID string) error {
	c := s.Column
	_, err := tx.ExecContext(ctx, `UPDATE `+c.Table+` SET `+c.CT+` = ?, `+c.KeyID+` = ? WHERE `+c.ID+` = ?`, ct, keyID, s.RowID)
	return err
}

// CountCiphertextsByKey returns how many stored ciphertexts, across every
// cipher column, each vault key encrypts (an empty key id for ciphertexts
// stored before their key was recorded).
func (db *DB) CountCiphertextsByKey(ctx context.Context) (map[string]int, error) {
	out := map[string]int{}
	for _, c := range cipherColumns {
		rows, err := db.r.QueryContext(ctx, `SELECT `+c.KeyID+`, COUNT(*) FROM `+c.Table+`
			WHERE `+c.CT+` IS NOT NULL AND length(`+c.CT+`) > 0 GROUP BY `+c.KeyID)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var k string
			var n int
			if err := rows.Scan(&k, &n); err != nil {
				rows.Close()
				return nil, err
			}
			out[k] += n
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}
