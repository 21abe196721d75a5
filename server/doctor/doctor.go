// Package doctor is `opsagent doctor`: it looks at a configuration and its data directory the way
// `serve` would, without writing anything, and names every fault with its
// fix. It exits 1 when any check fails (warnings alone exit 0).
package doctor

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/opsagent/opsagent/server"
	"github.com/opsagent/opsagent/store"
	"github.com/opsagent/opsagent/vault"
)

const doctorUsage = `Usage: opsagent doctor [serve flags] [--offline]

Checks, without changing anything: the configuration, the data directory's
owner and mode, free disk space, database integrity and migrations, the
vault, LLM reachability (one tiny request), SMTP, the base URL and the clock;
with --kubeconfig, a cluster connector's kubeconfig and credentials.
Takes the same flags and OPSAGENT_* variables as serve. Exit code 1 when a
check fails.
`

type doctorRun struct {
	out            io.Writer
	fails, warns   int
	offline        bool
	cfg            server.Config
	dataDirUsable  bool
	remoteDateSeen bool
}

func (d *doctorRun) report(level, check, msg, fix string) {
	fmt.Fprintf(d.out, "%-5s %-10s %s\n", level, check, msg)
	if fix != "" {
		fmt.Fprintf(d.out, "%-16s fix: %s\n", "", fix)
	}
	switch level {
	case "FAIL":
		d.fails++
	case "warn":
		d.warns++
	}
}

func (d *doctorRun) ok(check, msg string)        { d.report("ok", check, msg, "") }
func (d *doctorRun) warn(check, msg, fix string) { d.report("warn", check, msg, fix) }
func (d *doctorRun) fail(check, msg, fix string) { d.report("FAIL", check, msg, fix) }

func Command(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, doctorUsage); fs.PrintDefaults() }
	d := &doctorRun{out: stdout}
	d.cfg.Flags(fs)
	envErr := server.ApplyEnv(fs, getenv)
	fs.BoolVar(&d.offline, "offline", false, "skip the checks that use the network (LLM, SMTP, clock)")
	kubeconfig := fs.String("kubeconfig", "", "also check a cluster connector's kubeconfig: the cluster answers and accepts its credentials")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := errors.Join(envErr, d.cfg.Validate()); err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			d.fail("config", line, "correct the flag or its OPSAGENT_ variable (opsagent serve --help lists them)")
		}
	} else {
		d.ok("config", "flags and OPSAGENT_* variables are valid")
	}
	if d.cfg.DataDir != "" {
		if err := d.cfg.Abs(); err != nil {
			d.fail("data_dir", err.Error(), "")
		}
		d.checkDataDir()
	}
	if d.dataDirUsable {
		d.checkDisk()
		d.checkDatabase(ctx)
		d.checkVault()
	} else if d.cfg.DatabaseURL != "" {
		// PostgreSQL does not live in the data dir: a missing one (serve
		// creates it) must not skip the check of the database.
		d.checkDatabase(ctx)
	}
	d.checkBaseURL()
	d.checkSandbox(ctx)
	d.checkLLM(ctx)
	d.checkSMTP(ctx)
	d.checkClock(ctx)
	if *kubeconfig != "" {
		d.checkKubeconfig(ctx, *kubeconfig)
	}
	fmt.Fprintf(stdout, "\n%d failed, %d warnings\n", d.fails, d.warns)
	if d.fails > 0 {
		return fmt.Errorf("doctor found %d problem(s)", d.fails)
	}
	return nil
}

func (d *doctorRun) checkDataDir() {
	dir := d.cfg.DataDir
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		if parent, err := creatable(dir); err != nil {
			d.fail("data_dir", dir+" does not exist, and serve cannot create it: "+err.Error(),
				"create "+dir+" (mode 0700) as the user that runs opsagent, make "+parent+" writable for it, or point --data-dir (OPSAGENT_DATA_DIR) elsewhere")
			return
		}
		d.warn("data_dir", dir+" does not exist yet", "nothing to do: serve creates it (mode 0700) on first start")
		return
	case err != nil:
		d.fail("data_dir", err.Error(), "make the directory readable by the user that runs opsagent")
		return
	case !st.IsDir():
		d.fail("data_dir", dir+" is not a directory", "point --data-dir (OPSAGENT_DATA_DIR) at a directory")
		return
	}
	problems := 0
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Geteuid() {
		d.fail("data_dir", fmt.Sprintf("%s is owned by uid %d, but opsagent runs as uid %d", dir, sys.Uid, os.Geteuid()),
			fmt.Sprintf("chown -R %d %s (or run opsagent as its owner)", os.Geteuid(), dir))
		problems++
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		d.fail("data_dir", fmt.Sprintf("%s has mode %04o: other users can read the database, keys and vault", dir, perm),
			"chmod 700 "+dir)
		problems++
	}
	for _, rel := range []string{"keys/jwt.key", "vault/keyring", "opsagent.db"} {
		if fst, err := os.Stat(filepath.Join(dir, rel)); err == nil && fst.Mode().Perm()&0o077 != 0 {
			d.fail("data_dir", fmt.Sprintf("%s has mode %04o", filepath.Join(dir, rel), fst.Mode().Perm()), "chmod 600 "+filepath.Join(dir, rel))
			problems++
		}
	}
	probe, err := os.CreateTemp(dir, ".doctor-*")
	if err != nil {
		d.fail("data_dir", dir+" is not writable: "+err.Error(), "give the user that runs opsagent write access, or remount read-write")
		return
	}
	probe.Close()
	os.Remove(probe.Name())
	d.dataDirUsable = true
	if problems == 0 {
		d.ok("data_dir", dir+" is private (0700) and writable")
	}
}

func (d *doctorRun) checkDisk() {
	free, err := server.DiskFree(d.cfg.DataDir)
	switch {
	case err != nil:
		d.warn("disk", "free space unknown: "+err.Error(), "")
	case free < uint64(d.cfg.DiskMinFree):
		d.fail("disk", fmt.Sprintf("%s free, below the %s minimum: /readyz fails and writes may stop", server.FormatBytes(free), server.FormatBytes(uint64(d.cfg.DiskMinFree))),
			"free space on the volume, shorten retention (deploy/README.md), or lower --disk-min-free")
	default:
		d.ok("disk", server.FormatBytes(free)+" free")
	}
}

func (d *doctorRun) checkDatabase(ctx context.Context) {
	in, err := store.Inspect(ctx, d.cfg.Path("opsagent.db"))
	if d.cfg.DatabaseURL != "" {
		in, err = store.InspectPostgres(ctx, d.cfg.DatabaseURL)
	}
	switch {
	case err != nil && d.cfg.DatabaseURL != "":
		d.fail("database", "PostgreSQL: "+err.Error(), "check --database-url and that the server accepts this host")
		return
	case err != nil:
		d.fail("database", d.cfg.Path("opsagent.db")+": "+err.Error(), "restore the last backup: opsagent restore --in FILE --data-dir NEW")
		return
	case !in.Exists:
		d.ok("database", "none yet: serve creates and migrates it on first start")
		return
	case in.Integrity != "ok":
		d.fail("database", "integrity check failed: "+in.Integrity, "stop opsagent and restore the last backup (opsagent restore)")
	default:
		d.ok("database", "integrity ok")
	}
	switch {
	case len(in.Unknown) > 0:
		d.fail("migrations", "the database was migrated by a newer opsagent ("+strings.Join(in.Unknown, ", ")+"); this binary refuses to start",
			"run the newer opsagent binary (migrations are forward-only)")
	case len(in.Pending) > 0:
		d.warn("migrations", fmt.Sprintf("%d migration(s) will run on the next start: %s", len(in.Pending), strings.Join(in.Pending, ", ")),
			"take a backup first: opsagent backup --data-dir "+d.cfg.DataDir+" --out FILE")
	default:
		d.ok("migrations", "schema is current")
	}
	if !in.IncrementalVacuum {
		d.warn("database", "created before incremental vacuum: retention's deletes do not shrink the file",
			"once, with opsagent stopped: sqlite3 "+d.cfg.Path("opsagent.db")+" 'PRAGMA auto_vacuum=INCREMENTAL; VACUUM;'")
	}
}

func (d *doctorRun) checkVault() {
	exists, err := vault.Inspect(d.cfg.Path("vault"), d.cfg.VaultPassphrase)
	switch {
	case errors.Is(err, vault.ErrPassphraseRequired):
		d.fail("vault", "the keyring is protected by a passphrase and none is set", "set OPSAGENT_VAULT_PASSPHRASE (or --vault-passphrase)")
	case err != nil:
		d.fail("vault", err.Error(), "check OPSAGENT_VAULT_PASSPHRASE; if the keyring is lost, restore it from a backup")
	case !exists:
		d.ok("vault", "none yet: serve creates the keyring on first start")
	default:
		d.ok("vault", "keyring opens")
	}
}

func (d *doctorRun) checkBaseURL() {
	u := d.cfg.BaseURL
	switch {
	case u == "":
		d.warn("base_url", "not set: webhook URLs and mail links are relative paths", "set --base-url (OPSAGENT_BASE_URL) to the public URL, e.g. https://opsagent.example.com")
	case strings.HasPrefix(u, "http://") && !isLocalURL(u):
		d.warn("base_url", u+" is plain http: cookies are sent without Secure and WebAuthn refuses non-localhost http", "serve it over https (deploy/caddy/Caddyfile)")
	default:
		d.ok("base_url", u)
	}
}

func isLocalURL(u string) bool {
	rest := strings.TrimPrefix(u, "http://")
	return strings.HasPrefix(rest, "localhost") || strings.HasPrefix(rest, "127.") || strings.HasPrefix(rest, "[::1]")
}

// creatable reports whether dir, which does not exist, can be made: its
// nearest existing ancestor must be a directory this process can write (a
// probe directory is made and removed there, so the answer is the kernel's,
// root, read-only mounts and ACLs included). It returns that ancestor.
func creatable(dir string) (string, error) {
	parent := filepath.Dir(dir)
	for {
		st, err := os.Stat(parent)
		switch {
		case err == nil && !st.IsDir():
			return parent, fmt.Errorf("%s is not a directory", parent)
		case err == nil:
			probe, err := os.MkdirTemp(parent, ".doctor-*")
			if err != nil {
				return parent, fmt.Errorf("%s is not writable: %w", parent, err)
			}
			os.Remove(probe)
			return parent, nil
		case !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
			return parent, err
		}
		up := filepath.Dir(parent)
		if up == parent {
			return parent, err
		}
		parent = up
	}
}
