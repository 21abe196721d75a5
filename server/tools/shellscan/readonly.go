package shellscan

import (
	"fmt"
	"strings"
)

// BuiltinReadOnly are the commands that only read, in Pattern syntax. It is
// deliberately short: a command is here only when no argument makes it
// write, delete or run something else (or the arguments that do are
// excluded).
var BuiltinReadOnly = []string{
	"df", "du", "uptime", "free", "ps", "uname", "hostname !*", "hostname -f", "hostname -s", "hostname -i", "hostname -I", "hostname -d", "whoami", "id", "groups", "w", "who", "nproc", "arch",
	"command -v *", "command -V *", "date !*", "date +*", "date -u", "date -u !*", "date -u +*", "date -R", "date -I*", "date --iso-8601*", "lsblk", "lscpu", "lsmem", "lspci", "lsusb", "lsmod", "findmnt", "vmstat", "iostat", "mpstat",
	"pidstat", "top -b *", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "zgrep", "rg", "ls", "stat",
	"pwd", "echo", "printf !-v", "true", "false", "test", "[", "which", "type", "basename", "dirname", "realpath",
	"readlink", "md5sum", "sha1sum", "sha256sum", "cut", "tr", "column", "diff", "cmp", "tree", "jq", "env", "printenv",
	"sort", "getent", "ss", "netstat", "ip", "dig", "nslookup", "host", "ping -c *", "dmesg",
	"find", "sleep", "journalctl",
	"systemctl status *", "systemctl show *", "systemctl cat *", "systemctl list-units *", "systemctl list-unit-files *",
	"systemctl list-timers *", "systemctl list-sockets *", "systemctl list-dependencies *", "systemctl is-active *",
	"systemctl is-enabled *", "systemctl is-failed *", "systemctl --failed", "timedatectl !*", "timedatectl status *",
	"timedatectl show *", "hostnamectl !*", "hostnamectl status *", "loginctl list-sessions *", "loginctl list-users *",
	"kubectl get *", "kubectl describe *", "kubectl logs *", "kubectl top *", "kubectl version *", "kubectl cluster-info",
	"kubectl api-resources *", "kubectl explain *", "kubectl events *", "kubectl rollout status *", "kubectl rollout history *",
	"docker ps *", "docker images *", "docker logs *", "docker inspect *", "docker stats --no-stream *", "docker version",
	"docker info", "crontab -l",
	"lsof", "mount !*", "ulimit -a",
}

// readOnlyRunners run another command without changing anything
// themselves; the command they run is checked on its own.
var readOnlyRunners = map[string]bool{"sudo": true, "doas": true, "timeout": true, "nice": true, "ionice": true, "stdbuf": true,
	"env": true, "command": true, "xargs": true, "busybox": true, "toybox": true, "exec": true, "sh": true, "bash": true,
	"dash": true, "zsh": true}

// lookupVars change which program a name runs or what a shell runs first.
var lookupVars = map[string]bool{"PATH": true, "LD_PRELOAD": true, "LD_LIBRARY_PATH": true, "LD_AUDIT": true, "BASH_ENV": true,
	"ENV": true, "IFS": true, "SHELLOPTS": true, "BASHOPTS": true, "PROMPT_COMMAND": true, "PS4": true, "GCONV_PATH": true,
	"PYTHONPATH": true, "PYTHONSTARTUP": true, "PERL5LIB": true, "PERL5OPT": true, "NODE_OPTIONS": true, "GIT_CONFIG": true,
	"KUBECONFIG": true, "DOCKER_HOST": true, "DOCKER_CONFIG": true, "RIPGREP_CONFIG_PATH": true, "?": true}

func changesLookup(env []string) string {
	for _, v := range env {
		if lookupVars[v] || strings.HasPrefix(v, "LD_") || strings.HasPrefix(v, "BASH_FUNC_") {
			return v
		}
	}
	return ""
}

// ReadOnly proves calls read-only against the built-in list and a
// project's additions.
type ReadOnly struct {
	builtin patternSet // checked against the programs' option tables too
	extra   patternSet // a project's additions: its own decision
}

// NewReadOnly compiles the built-in list plus additions.
func NewReadOnly(additions []string) (*ReadOnly, error) {
	r := &ReadOnly{}
	for i, t := range append(append([]string(nil), BuiltinReadOnly...), additions...) {
		p, err := ParsePattern(t)
		if err != nil {
			return nil, fmt.Errorf("read-only pattern %q: %v", t, err)
		}
		if i < len(BuiltinReadOnly) {
			r.builtin.add(p)
		} else {
			r.extra.add(p)
		}
	}
	return r, nil
}

// Proves reports whether every part of the call only reads: nothing
// opaque, no file written, no script run, no function defined, and every
// command on the list (or a runner of one). The string says why, either way.
func (r *ReadOnly) Proves(a *Analysis) (bool, string) {
	switch {
	case a.IsOpaque():
		return false, "part of it cannot be analysed: " + a.Opaque[0].Reason
	case len(a.Writes) > 0:
		return false, "it redirects output into " + a.Writes[0]
	case a.RunsFiles:
		return false, "it runs a script file"
	case len(a.Evaluates) > 0:
		return false, a.Evaluates[0]
	case len(a.Functions) > 0:
		return false, "it defines shell functions"
	case changesLookup(a.Env) != "":
		return false, "it sets " + changesLookup(a.Env) + ", which changes what programs run"
	case len(a.Commands) == 0:
		return false, "it runs no command"
	}
	var names []string
	for i := range a.Commands {
		c := &a.Commands[i]
		if c.Wrapper && readOnlyRunners[c.Name] {
			continue
		}
		if r.extra.match(c, true) == nil {
			if r.builtin.match(c, true) == nil {
				if why := optionsVerdict(c); why != "" {
					return false, string(why) // say which option, not only that the line is off the list
				}
				return false, c.String() + " is not on the read-only list"
			}
			if why := optionsVerdict(c); why != "" {
				return false, string(why)
			}
		}
		if len(names) < 5 {
			names = append(names, c.String())
		} else if len(names) == 5 {
			names = append(names, "…")
		}
	}
	return true, "every command only reads (" + strings.Join(names, "; ") + ")"
}
