package shellscan

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
)

// Category is an effect a command can have, as a set of command patterns
// (see Pattern) and of files whose writing has the effect.
type Category struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Commands    []string `json:"commands"`
	Writes      []string `json:"writes,omitempty"`
}

// The built-in categories. Projects add patterns to them or new ones.
const (
	DeletesFiles       = "deletes_files"
	StopsHost          = "stops_host"
	RunsDownloadedCode = "runs_downloaded_code"
	Downloads          = "downloads"
)

// Builtin is the documented catalog every project starts from.
var Builtin = []Category{
	{Name: DeletesFiles, Description: "deletes or wipes files, directories or disks",
		Commands: []string{"rm", "unlink", "rmdir", "shred", "srm", "wipe", "wipefs", "mkfs", "mkfs.*", "mke2fs", "mkswap",
			"blkdiscard", "sgdisk", "find * -delete *", "rsync * --delete* *", "rsync * --remove-source-files *",
			"git clean *", "git * clean *", "truncate", "dd * of=*", "mv * /dev/null", "tar * --remove-files *",
			"zip * -m *", "zip * --move *", "tee * /dev/sd* *", "cp * /dev/sd*", "crontab * -r *", "fallocate * -p *", "fallocate * --punch-hole *"},
		Writes: []string{"/dev/sd*", "/dev/nvme*", "/dev/vd*", "/dev/xvd*", "/dev/hd*", "/dev/mmcblk*", "/dev/dm-*", "/dev/mapper/*"}},
	{Name: StopsHost, Description: "stops, reboots, halts or suspends the host, or kills every process",
		Commands: append([]string{"shutdown", "reboot", "poweroff", "halt", "kexec", "init 0", "init 6", "init S", "init s", "init 1",
			"telinit 0", "telinit 6", "telinit 1", "telinit S", "telinit s",
			"systemctl * poweroff *", "systemctl * reboot *", "systemctl * halt *", "systemctl * kexec *",
			"systemctl * suspend *", "systemctl * hibernate *", "systemctl * hybrid-sleep *", "systemctl * rescue *",
			"systemctl * emergency *", "systemctl * soft-reboot *", "systemctl * poweroff.target *", "systemctl * reboot.target *",
			"systemctl * halt.target *", "systemctl * rescue.target *", "systemctl * emergency.target *", "systemctl * kexec.target *",
			"systemctl * default.target --force *",
			"loginctl * poweroff *", "loginctl * reboot *", "loginctl * halt *", "loginctl * suspend *", "loginctl * hibernate *",
			"kill * 1", "kill * -1", "kill * 1 *", "kill * -1 *", "pkill * systemd *", "pkill * init *",
			"killall * systemd *", "killall * init *", "killall5", "openrc-shutdown", "uadmin", "ipmitool * power *",
			"ipmitool * chassis *", "dbus-send * *PowerOff* *", "dbus-send * *Reboot* *", "dbus-send * *Halt* *",
			"busctl * PowerOff *", "busctl * Reboot *", "busctl * Halt *", "gdbus * *PowerOff* *", "gdbus * *Reboot* *",
			"tee * /proc/sysrq-trigger *", "dd * of=/proc/sysrq-trigger *", "cp * /proc/sysrq-trigger", "tee * /sys/power/state *",
			"dd * of=/sys/power/state *", "rtcwake", "pm-suspend", "pm-hibernate", "zzz", "ctrlaltdel"}, stopsHostSpellings()...),
		Writes: []string{"/proc/sysrq-trigger", "/sys/power/state", "/proc/sys/kernel/sysrq"}},
	{Name: Downloads, Description: "fetches data over the network",
		Commands: []string{"curl", "wget", "fetch", "aria2c", "axel", "lwp-download", "lwp-request", "GET", "http", "https", "xh",
			"nc", "ncat", "netcat", "socat", "ftp", "tftp", "sftp", "scp", "rsync", "httpie", "lynx", "links", "w3m", "openssl s_client *"}},
	{Name: RunsDownloadedCode, Description: "runs code fetched over the network (a download piped into a shell, a fetched file run)",
		Commands: []string{"npx", "bunx", "pnpx", "uvx", "pipx run *", "go run *@*", "pip * git+*", "pip3 * git+*",
			"pip * http*", "pip3 * http*", "npm exec *", "yarn dlx *", "pnpm dlx *"}},
}

// More stops_host spellings: the systemd units behind the power verbs, and
// the power calls of systemd and logind over D-Bus by every D-Bus client;
// writes to the sysrq trigger by any spelling of its path.
func stopsHostSpellings() []string {
	var more []string
	for _, u := range []string{"systemd-reboot.service", "systemd-poweroff.service", "systemd-halt.service", "systemd-kexec.service",
		"systemd-soft-reboot.service", "systemd-suspend.service", "systemd-hibernate.service", "systemd-hybrid-sleep.service",
		"systemd-suspend-then-hibernate.service", "suspend.target", "hibernate.target", "hybrid-sleep.target",
		"suspend-then-hibernate.target", "soft-reboot.target", "sleep.target", "shutdown.target", "final.target",
		"ctrl-alt-del.target", "runlevel0.target", "runlevel1.target", "runlevel6.target", "suspend-then-hibernate", "sleep",
		"systemd-reboot", "systemd-poweroff", "systemd-halt", "systemd-kexec"} {
		more = append(more, "systemctl * "+u+" *")
	}
	for _, v := range []string{"kexec", "hybrid-sleep", "suspend-then-hibernate", "sleep"} {
		more = append(more, "loginctl * "+v+" *")
	}
	for _, tool := range []string{"dbus-send", "gdbus", "busctl", "qdbus", "dbus-send-legacy"} {
		for _, m := range []string{"PowerOff", "Reboot", "Halt", "KExec", "SoftReboot", "Suspend", "Hibernate", "HybridSleep",
			"SuspendThenHibernate", "Sleep"} {
			more = append(more, tool+" * *"+m+"* *")
		}
	}
	for _, w := range []string{"tee * *sysrq-trigger *", "dd * of=*sysrq-trigger *", "cp * *sysrq-trigger", "tee * *power/state *",
		"dd * of=*power/state *"} {
		more = append(more, w)
	}
	return more
}

// sysrqLike: a relative write target that may be the sysrq trigger or the
// power state file once the line has changed directory (cd /proc; echo b >
// sysrq-trigger).
func sysrqLike(w string) bool {
	if strings.HasPrefix(w, "/") {
		return false
	}
	c := path.Clean(w)
	return path.Base(c) == "sysrq-trigger" || c == "power/state" || strings.HasSuffix(c, "/power/state") || c == "sys/kernel/sysrq" || strings.HasSuffix(c, "/sys/kernel/sysrq")
}

// Effect is one category a call has, and the part of it that has it.
type Effect struct {
	Category string `json:"category"`
	Because  string `json:"because"`
}

type catEntry struct {
	name     string
	commands patternSet
	writes   []*regexp.Regexp
}

// Catalog computes effects. Build it once per project with NewCatalog.
type Catalog struct {
	cats []catEntry
}

var categoryName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// NewCatalog is the built-in catalog plus a project's additions (category
// name -> command patterns; a new name is a new category).
func NewCatalog(extra map[string][]string) (*Catalog, error) {
	byName := map[string]*Category{}
	var order []string
	for _, c := range Builtin {
		cc := c
		cc.Commands = append([]string(nil), c.Commands...)
		byName[c.Name] = &cc
		order = append(order, c.Name)
	}
	names := make([]string, 0, len(extra))
	for n := range extra {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !categoryName.MatchString(n) {
			return nil, fmt.Errorf("category %q: a name is lower case letters, digits and _", n)
		}
		c, ok := byName[n]
		if !ok {
			c = &Category{Name: n}
			byName[n] = c
			order = append(order, n)
		}
		c.Commands = append(c.Commands, extra[n]...)
	}
	cat := &Catalog{}
	for _, n := range order {
		c := byName[n]
		e := catEntry{name: n}
		for _, t := range c.Commands {
			p, err := ParsePattern(t)
			if err != nil {
				return nil, fmt.Errorf("category %s, pattern %q: %v", n, t, err)
			}
			e.commands.add(p)
		}
		for _, w := range c.Writes {
			re, err := globRegexp(w)
			if err != nil {
				return nil, err
			}
			e.writes = append(e.writes, re)
		}
		cat.cats = append(cat.cats, e)
	}
	return cat, nil
}

// DefaultCatalog is the built-in catalog alone.
var DefaultCatalog = func() *Catalog {
	c, err := NewCatalog(nil)
	if err != nil {
		panic(err)
	}
	return c
}()

// Effects lists the categories the call has, each once, with the first
// part that has it. A call that runs a program fed by a download, or runs a
// file in a line that downloads, runs downloaded code.
func (cat *Catalog) Effects(a *Analysis) []Effect {
	var out []Effect
	seen := map[string]bool{}
	add := func(name, because string) {
		if !seen[name] {
			seen[name] = true
			out = append(out, Effect{Category: name, Because: because})
		}
	}
	for _, e := range cat.cats {
		for i := range a.Commands {
			c := &a.Commands[i]
			if e.commands.match(c, false) != nil {
				if e.name == StopsHost && killChecksOwnShell(c) {
					continue
				}
				add(e.name, c.String())
				break
			}
		}
		for _, w := range a.Writes {
			clean := w
			if strings.HasPrefix(w, "/") {
				clean = path.Clean(w) // /proc//sysrq-trigger, /proc/self/../sysrq-trigger
			}
			for _, re := range e.writes {
				if re.MatchString(w) || re.MatchString(clean) {
					add(e.name, "writes "+w)
				}
			}
			if e.name == StopsHost && sysrqLike(w) {
				add(e.name, "writes "+w+", which is the sysrq trigger or the power state file after a cd")
			}
		}
	}
	for _, o := range a.Opaque {
		for _, f := range o.Feeds {
			if cat.isDownloader(f) {
				add(RunsDownloadedCode, o.Reason)
			}
		}
	}
	if a.RunsFiles && seen[Downloads] {
		add(RunsDownloadedCode, "runs a file in a command line that downloads")
	}
	return out
}

func (cat *Catalog) isDownloader(name string) bool {
	c := Command{Name: name}
	for _, e := range cat.cats {
		if e.name != Downloads {
			continue
		}
		for _, p := range e.commands.all {
			if p.anyArgs && p.MatchName(&c) {
				return true
			}
		}
	}
	return false
}

// Has reports whether effects include the category.
func Has(effects []Effect, category string) bool {
	for _, e := range effects {
		if e.Category == category {
			return true
		}
	}
	return false
}

// Categories are the catalog's category names.
func (cat *Catalog) Categories() []string {
	out := make([]string, 0, len(cat.cats))
	for _, e := range cat.cats {
		out = append(out, e.name)
	}
	return out
}

// describe lists the names for error messages.
func describe(xs []string) string { return strings.Join(xs, ", ") }
