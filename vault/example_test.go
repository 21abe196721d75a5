package vault_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/opsagent/opsagent/vault"
)

// The server binds each ciphertext to its row, rotates by re-encrypting
// rows, and masks secret values out of what the agent prints.
func Example() {
	dataDir, _ := os.MkdirTemp("", "opsagent-example")
	defer os.RemoveAll(dataDir)

	v, err := vault.Open(filepath.Join(dataDir, "vault"), "", nil)
	if err != nil {
		panic(err)
	}
	aad := "org:0192b3c4/secret:DB_PASSWORD"
	ct, keyID, _ := v.EncryptFor(aad, []byte("hunter2-hunter2"))

	pt, _ := v.DecryptFor(aad, ct)
	fmt.Println(string(pt))
	_, err = v.DecryptFor("org:other/secret:DB_PASSWORD", ct)
	fmt.Println(err)

	newID, _ := v.Rotate()
	ct, _, _ = v.Reencrypt(ct) // for every row whose key id is not current
	fmt.Println(v.Retire(keyID), v.CurrentKeyID() == newID)

	m := vault.NewMasker(string(pt))
	fmt.Println(m.Mask("psql password=hunter2-hunter2"))
	// Output:
	// hunter2-hunter2
	// vault: ciphertext belongs to another context
	// <nil> true
	// psql password=********
}
