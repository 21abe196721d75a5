// Package sandbox runs every command opsagent starts (the server's local
// run_command and a connector host's exec) under a kernel sandbox built
// from the command's decision: Landlock for the filesystem, the network
// and signals, seccomp for the calls that change the host, and
// no_new_privs. Go cannot run code between fork and exec, so the binary
// re-executes itself as a launcher (LauncherArg) that applies the profile
// to itself and then execs the command: the command inherits it and can
// never drop it.
package sandbox

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Profile is what one command may do. The zero Profile still sets
// no_new_privs; every field narrows it further. Fields combine by taking
// the narrower of two (Narrow), so a host's own profile can only take away.
type Profile struct {
	// ReadOnly: the filesystem is read-only except /dev/null and TempDir.
	ReadOnly bool `json:"read_only,omitempty"`
	// NoDelete: no file or directory removal and no truncation.
	NoDelete bool `json:"no_delete,omitempty"`
	// NoExecNew: nothing written during the command can be executed (the
	// system's program directories are executable and read-only, the rest
	// writable and not executable).
	NoExecNew bool `json:"no_exec_new,omitempty"`
	// NoNetwork: no TCP connect or bind (Landlock ABI 4) and no IP sockets.
	NoNetwork bool `json:"no_network,omitempty"`
	// DenyHostStop: reboot, kexec, modules, mounts, swap, the clock, the
	// host name and ptrace are refused, and so are signals to PID 1 and to
	// every process (-1), and writes to the kernel's stop switches
	// (/proc/sysrq-trigger and the like).
	DenyHostStop bool `json:"deny_host_stop,omitempty"`
	// ScopeSignals: signals reach only the command's own processes, and
	// abstract unix sockets outside it are unreachable.
	ScopeSignals bool `json:"scope_signals,omitempty"`
	// HideSystemSockets: the system D-Bus and systemd's sockets are hidden
	// in a private mount namespace, where the kernel allows one.
	HideSystemSockets bool `json:"hide_system_sockets,omitempty"`
	// WritePaths, when set, are the only places writes are allowed (besides
	// TempDir and /dev/null): a project's or host's allow-paths list.
	WritePaths []string `json:"write_paths,omitempty"`
	// DenyWritePaths are never writable (a deletes_files rule's paths).
	DenyWritePaths []string `json:"deny_write_paths,omitempty"`
	// TempDir is the command's private temporary directory (writable, not
	// executable); the caller creates it and removes it afterwards.
	TempDir string `json:"temp_dir,omitempty"`
	// LandlockABI is the Landlock version to use; 0 means none (the host
	// has none, or it is simulated away).
	LandlockABI int `json:"landlock_abi,omitempty"`
}

// Narrow returns p restricted further by o: every switch either sets
// wins, and write paths keep only what both allow.
func (p Profile) Narrow(o Profile) Profile {
	out := p
	out.ReadOnly = p.ReadOnly || o.ReadOnly
	out.NoDelete = p.NoDelete || o.NoDelete
	out.NoExecNew = p.NoExecNew || o.NoExecNew
	out.NoNetwork = p.NoNetwork || o.NoNetwork
	out.DenyHostStop = p.DenyHostStop || o.DenyHostStop
	out.ScopeSignals = p.ScopeSignals || o.ScopeSignals
	out.HideSystemSockets = p.HideSystemSockets || o.HideSystemSockets
	out.DenyWritePaths = append(append([]string(nil), p.DenyWritePaths...), o.DenyWritePaths...)
	switch {
	case len(p.WritePaths) == 0:
		out.WritePaths = o.WritePaths
	case len(o.WritePaths) == 0:
	default:
		// Both name paths: a path stays writable only where the other list
		// allows it too (it is one of the other's, or beneath one).
		var keep []string
		for _, a := range p.WritePaths {
			for _, b := range o.WritePaths {
				switch {
				case within(a, b):
					keep = append(keep, a)
				case within(b, a):
					keep = append(keep, b)
				}
			}
		}
		if len(keep) == 0 {
			out.ReadOnly = true
		}
		out.WritePaths = keep
	}
	if o.LandlockABI < out.LandlockABI {
		out.LandlockABI = o.LandlockABI
	}
	return out
}

// within reports whether path is dir or beneath it.
func within(path, dir string) bool {
	dir = strings.TrimSuffix(dir, "/")
	return path == dir || strings.HasPrefix(path, dir+"/") || dir == ""
}

// Encode is the profile as the launcher reads it.
func (p Profile) Encode() string {
	b, _ := json.Marshal(p) // plain values: cannot fail
	return string(b)
}

// Decode reads an encoded profile; unknown fields are refused, so a
// launcher never silently drops a restriction it does not understand.
func Decode(s string) (Profile, error) {
	var p Profile
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Profile{}, fmt.Errorf("sandbox profile: %v", err)
	}
	return p, nil
}

// Summary says in a few words what the profile enforces, for logs and
// results ("read-only filesystem, no deletion, host calls denied").
func (p Profile) Summary() string {
	var parts []string
	if p.LandlockABI == 0 && (p.ReadOnly || p.NoDelete || p.NoExecNew || len(p.WritePaths) > 0) {
		parts = append(parts, "no Landlock on this host: filesystem rules not enforced by the kernel")
	}
	add := func(on bool, s string) {
		if on {
			parts = append(parts, s)
		}
	}
	add(p.ReadOnly, "read-only filesystem")
	add(len(p.WritePaths) > 0 && !p.ReadOnly, "writes only under "+strings.Join(p.WritePaths, ", "))
	add(p.NoDelete, "no deletion or truncation")
	add(p.NoExecNew, "no execution of new files")
	add(p.NoNetwork, "no network")
	add(p.DenyHostStop, "host-changing calls denied")
	add(p.ScopeSignals, "signals only within the command")
	if len(parts) == 0 {
		return "no_new_privs only"
	}
	return strings.Join(parts, ", ")
}
