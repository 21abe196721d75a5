// Package confine applies a command's sandbox to the calling thread
// (Landlock, seccomp, no_new_privs, the hidden system sockets) and is the
// launcher that `opsagent sandbox-exec` runs.
//
// The launcher runs from this package's init, before the rest of the
// binary is initialised: Go initialises packages in import-path order as
// soon as their imports are, so a package that imports only os, syscall
// and packages with no initialisation of their own runs right after os,
// ahead of the tens of milliseconds the server's packages take
// (jsonschema, shellscan's patterns, bleve, the store, ...). So this
// package imports only what os itself depends on: syscall and its own
// constants rather than golang.org/x/sys/unix, path rather than
// path/filepath, its own few string helpers rather than strings and
// strconv, and no fmt, encoding/json or os/exec. Each of those would hold
// its init back (the linker orders ready packages by import path, and
// "strings" waits behind every "github.com/..." one).
// TestLauncherImportsStayLight keeps it so.
package confine

import "errors"

// Spec is what the kernel is asked to enforce for one command: the
// launcher's view of a sandbox.Profile, field for field (same names, same
// keys). sandbox.Profile is encoded into launcher words by its JSON keys,
// and Parse refuses any key it does not know, so a restriction added to
// the Profile can never be dropped silently on its way here.
type Spec struct {
	ReadOnly          bool     `json:"read_only,omitempty"`
	NoDelete          bool     `json:"no_delete,omitempty"`
	NoExecNew         bool     `json:"no_exec_new,omitempty"`
	NoNetwork         bool     `json:"no_network,omitempty"`
	DenyHostStop      bool     `json:"deny_host_stop,omitempty"`
	ScopeSignals      bool     `json:"scope_signals,omitempty"`
	HideSystemSockets bool     `json:"hide_system_sockets,omitempty"`
	WritePaths        []string `json:"write_paths,omitempty"`
	DenyWritePaths    []string `json:"deny_write_paths,omitempty"`
	TempDir           string   `json:"temp_dir,omitempty"`
	LandlockABI       int      `json:"landlock_abi,omitempty"`
}

// TempRoot is the name of the directory that holds the commands' private
// temp dirs and nothing else (sandbox.TempDir makes them there); under a
// read-only profile nothing beneath it executes.
const TempRoot = ".opsagent-sandbox"

// Arg is the hidden subcommand: `opsagent sandbox-exec WORD... -- PROGRAM ARGS...`.
const Arg = "sandbox-exec"

// Parse reads the launcher's profile words: "key" for a switch that is
// on, "key=value" for a value (once per element of a list). Words come
// from argv, so a value may hold any byte but NUL and needs no quoting.
func Parse(words []string) (Spec, error) {
	var s Spec
	seen := map[string]bool{}
	for _, w := range words {
		key, val, hasVal := cut(w, '=')
		flag := func(b *bool) error {
			if hasVal {
				return errors.New("sandbox profile: " + key + " takes no value")
			}
			*b = true
			return nil
		}
		once := func() error {
			if !hasVal {
				return errors.New("sandbox profile: " + key + " needs a value")
			}
			if seen[key] {
				return errors.New("sandbox profile: " + key + " given twice")
			}
			seen[key] = true
			return nil
		}
		list := func(l *[]string) error {
			if !hasVal {
				return errors.New("sandbox profile: " + key + " needs a value")
			}
			*l = append(*l, val)
			return nil
		}
		var err error
		switch key {
		case "read_only":
			err = flag(&s.ReadOnly)
		case "no_delete":
			err = flag(&s.NoDelete)
		case "no_exec_new":
			err = flag(&s.NoExecNew)
		case "no_network":
			err = flag(&s.NoNetwork)
		case "deny_host_stop":
			err = flag(&s.DenyHostStop)
		case "scope_signals":
			err = flag(&s.ScopeSignals)
		case "hide_system_sockets":
			err = flag(&s.HideSystemSockets)
		case "write_paths":
			err = list(&s.WritePaths)
		case "deny_write_paths":
			err = list(&s.DenyWritePaths)
		case "temp_dir":
			if err = once(); err == nil {
				s.TempDir = val
			}
		case "landlock_abi":
			if err = once(); err == nil {
				s.LandlockABI, err = atoi(val)
			}
		default:
			// The launcher does not know this restriction: it refuses to
			// run rather than run without it.
			err = errors.New("sandbox profile: unknown field " + quote(key))
		}
		if err != nil {
			return Spec{}, err
		}
	}
	return s, nil
}

// within reports whether file is dir or beneath it.
func within(file, dir string) bool {
	dir = trimSuffix(dir, "/")
	return file == dir || hasPrefix(file, dir+"/") || dir == ""
}
