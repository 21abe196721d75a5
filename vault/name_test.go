package vault

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateName(t *testing.T) {
	for _, name := range []string{"A", "_", "DB_PASSWORD", "aws_secret_access_key", "X1", strings.Repeat("K", MaxNameLen), "GITHUB_TOKEN", "PATHS"} {
		if err := ValidateName(name); err != nil {
			t.Errorf("ValidateName(%q): got %v, want nil", name, err)
		}
	}
	for _, name := range []string{"", "1ABC", "A-B", "A B", "A.B", "Ä", "A=B", "A\x00", strings.Repeat("K", MaxNameLen+1),
		"PATH", "path", "IFS", "BASH_ENV", "LD_PRELOAD", "ld_library_path", "DYLD_INSERT_LIBRARIES", "OPSAGENT_VAULT_PASSPHRASE"} {
		if err := ValidateName(name); !errors.Is(err, ErrInvalidName) {
			t.Errorf("ValidateName(%q): got %v, want ErrInvalidName", name, err)
		}
	}
}
