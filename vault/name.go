package vault

import (
	"fmt"
	"strings"
)

// MaxNameLen is the longest secret name.
const MaxNameLen = 64

// reservedNames change how a shell or the dynamic loader runs every command;
// a secret injected under one of them would break or hijack the agent's
// commands. Compared case-insensitively.
var reservedNames = map[string]bool{
	"PATH": true, "HOME": true, "SHELL": true, "USER": true, "IFS": true,
	"ENV": true, "BASH_ENV": true, "SHELLOPTS": true, "BASHOPTS": true,
	"PS4": true, "PROMPT_COMMAND": true, "CDPATH": true, "PWD": true,
}

// reservedPrefixes: the loader's variables and the platform's own settings.
var reservedPrefixes = []string{"LD_", "DYLD_", "OPSAGENT_"}

// ValidateName checks that name can be a secret's name and, so, the name of
// the environment variable the agent injects it as: it matches
// ^[A-Za-z_][A-Za-z0-9_]{0,63}$ and is not one of the variables that steer a
// shell or the loader (PATH, IFS, BASH_ENV, LD_*, ...) nor in the OPSAGENT_
// namespace. Errors wrap ErrInvalidName and say why, for a 422 message.
func ValidateName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty", ErrInvalidName)
	}
	if len(name) > MaxNameLen {
		return fmt.Errorf("%w: longer than %d characters", ErrInvalidName, MaxNameLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return fmt.Errorf("%w: use letters, digits and underscores, not starting with a digit", ErrInvalidName)
		}
	}
	upper := strings.ToUpper(name)
	if reservedNames[upper] {
		return fmt.Errorf("%w: %s is reserved by the shell", ErrInvalidName, upper)
	}
	for _, p := range reservedPrefixes {
		if strings.HasPrefix(upper, p) {
			return fmt.Errorf("%w: the %s prefix is reserved", ErrInvalidName, p)
		}
	}
	return nil
}
