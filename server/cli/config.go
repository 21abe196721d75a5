package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/opsagent/opsagent/server/cliclient"
)

// Config is the client's own file, USER_CONFIG_DIR/opsagent/config.json:
// per profile, the server to talk to and the current project (`projects
// use`). Secrets never go here; the credential stays in its own 0600 file.
type Config struct {
	Profiles map[string]Profile `json:"profiles"`
}

// Profile is one named server and its current project.
type Profile struct {
	Server      string `json:"server,omitempty"`
	Project     string `json:"project,omitempty"`      // project id
	ProjectName string `json:"project_name,omitempty"` // shown by whoami; the id is what is sent
}

var profileName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// configPath is the config file; OPSAGENT_CONFIG overrides it.
func configPath(getenv func(string) string) (string, error) {
	if p := getenv("OPSAGENT_CONFIG"); p != "" {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no user config directory (set OPSAGENT_CONFIG): %w", err)
	}
	return filepath.Join(dir, "opsagent", "config.json"), nil
}

func loadConfig(path string) (*Config, error) {
	c := &Config{Profiles: map[string]Profile{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if c.Profiles == nil {
		c.Profiles = map[string]Profile{}
	}
	return c, nil
}

// save writes the file atomically (0600, directory 0700).
func (c *Config) save(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".config-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// credentialsPath is where `opsagent login --profile P` keeps P's credential.
func credentialsPath(getenv func(string) string, profile string) (string, error) {
	if p := getenv("OPSAGENT_CREDENTIALS"); p != "" {
		return p, nil
	}
	return cliclient.ProfilePath(profile)
}
