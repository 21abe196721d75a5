package server_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/internal/testkit"
	"github.com/opsagent/opsagent/server"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
	"github.com/opsagent/opsagent/server/sandbox"
)

// The sandbox corpus (testdata/sandbox) runs over HTTP against the real
// server with read-only auto-allow on and an approver that approves every
// call. The parser may be fooled: what must hold is what the kernel holds,
// checked on marker and victim files and on the sandbox's own refusals.

// newSandboxE2E is newE2E with config options.
func newSandboxE2E(t *testing.T, opts ...func(*server.Config)) *e2e {
	t.Helper()
	fake := llmfake.New(t)
	env := newEnv(t, append([]func(*server.Config){withLLM(fake), allowLocal}, opts...)...)
	c := env.register("oncall@example.com")
	withProject(t, env, c)
	e := &e2e{env: env, fake: fake, c: c, work: filepath.Join(env.Dir, "work", c.Project)}
	for _, d := range []string{"mk", "vic", "homes"} {
		if err := os.MkdirAll(filepath.Join(e.work, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// sandboxLine is one corpus line with its placeholders made unique.
type sandboxLine struct {
	n      int
	raw    string // as written in the file
	line   string // as sent
	marker string // mk/mN, relative to the working directory
	victim string
	dir    string
}

// sandboxCorpus reads testdata/sandbox/<name>, numbering lines from first
// (so two corpora in one project never share a marker), and lays out the
// victims and login homes the lines name.
func sandboxCorpus(t *testing.T, e *e2e, name string, first int, url string) []sandboxLine {
	t.Helper()
	f, err := os.Open(testkit.Testdata("sandbox", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	base := strings.TrimSuffix(url, "/i.sh")
	var out []sandboxLine
	sc := bufio.NewScanner(f)
	for n := first; sc.Scan(); {
		raw := strings.TrimSpace(sc.Text())
		if raw == "" || strings.HasPrefix(raw, "#") {
			continue
		}
		l := sandboxLine{n: n, raw: raw, marker: fmt.Sprintf("mk/m%d", n), victim: fmt.Sprintf("vic/v%d", n), dir: fmt.Sprintf("vic/d%d", n)}
		home := fmt.Sprintf("homes/h%d", n)
		l.line = strings.NewReplacer("⏎", "\n", "@M@", l.marker, "@V@", l.victim, "@D@", l.dir, "@H@", home,
			"@URL@", url, "@BASE@", base).Replace(raw)
		if strings.Contains(raw, "@V@") {
			write(t, filepath.Join(e.work, l.victim), fmt.Sprintf("canary %d\n", n))
		}
		if strings.Contains(raw, "@D@") {
			write(t, filepath.Join(e.work, l.dir, "keep"), "keep\n")
		}
		if strings.Contains(raw, "@H@") {
			for _, rc := range []string{".bash_profile", ".bashrc", ".profile"} {
				write(t, filepath.Join(e.work, home, rc), "touch "+l.marker+"\n")
			}
		}
		out = append(out, l)
		n++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// sandboxOutcome is what became of one line.
type sandboxOutcome struct {
	blocked, auto, approved bool
	exit                    int // -1 when it did not run
	output                  string
}

var exitCodeRe = regexp.MustCompile(`(?m)^exit code (-?\d+) \(target server`)

func runSandboxCorpus(t *testing.T, e *e2e, lines []sandboxLine) []sandboxOutcome {
	t.Helper()
	sent := make([]string, len(lines))
	for i, l := range lines {
		sent[i] = l.line
	}
	run := e.runCorpus(t, sent, false)
	if len(run.results) != len(lines) {
		t.Fatalf("%d results for %d calls", len(run.results), len(lines))
	}
	out := make([]sandboxOutcome, len(lines))
	for i, r := range run.results {
		o := sandboxOutcome{exit: -1}
		o.output, _ = r.Data["output"].(string)
		o.blocked = r.Data["blocked"] == true
		o.auto = strings.Contains(o.output, "[policy] ran without a person")
		o.approved = strings.Contains(o.output, "[policy] ran with a person's approval")
		if m := exitCodeRe.FindStringSubmatch(o.output); m != nil {
			o.exit, _ = strconv.Atoi(m[1])
		}
		out[i] = o
	}
	return out
}

// lexists is exists without following a symlink (ln -s leaves one).
func lexists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// carelessReadOnly are patterns a careless operator might add to the
// read-only list: with them most of writes.txt runs without a person, so
// only the kernel stands between those lines and the disk.
var carelessReadOnly = []string{"sort *", "tee *", "cp *", "dd *", "install *", "ln *", "mkdir *", "mkfifo *", "touch *",
	"truncate *", "split *", "gzip *", "tar *", "curl *", "script *", "find *", "awk *", "sed *", "env *", "timeout *",
	"nice *", "stdbuf *", "ionice *", "flock *", "setpriv *", "nohup *", "xargs *", "sh *", "bash *", "python3 *",
	"perl *", "git *", "ssh *", "ip *", "strace *", "uniq *", "chmod *", "printf *", "ls *", "df *", "uptime *",
	"date *", "cat *", "id *", "echo *", "true *", "command *", "exec *"}

func TestSandboxCorpusReadOnlyPromiseHeldByTheKernel(t *testing.T) {
	t.Parallel()
	if k := sandbox.Probe(); k.LandlockABI < 3 || !k.Seccomp {
		t.Fatalf("this machine's kernel has Landlock ABI %d, seccomp %v: the corpus needs both", k.LandlockABI, k.Seccomp)
	}
	e := newSandboxE2E(t)
	url, _ := downloadServer(t)
	total, autos, refused := 0, 0, 0
	for _, pass := range []struct {
		name     string
		readOnly []string
		first    int
	}{{"built-in read-only list", nil, 0}, {"careless read-only additions", carelessReadOnly, 1000}} {
		e.c.must(200, "PUT", "/api/command-policy", map[string]any{"auto_allow_read_only": true, "read_only_commands": pass.readOnly})
		lines := sandboxCorpus(t, e, "writes.txt", pass.first, url)
		outs := runSandboxCorpus(t, e, lines)
		passAuto := 0
		for i, l := range lines {
			o := outs[i]
			total++
			if !o.auto {
				continue
			}
			autos++
			passAuto++
			if lexists(filepath.Join(e.work, l.marker)) {
				t.Errorf("%s: ESCAPE: %q ran without a person and wrote %s: %.300s", pass.name, l.line, l.marker, o.output)
			}
			if strings.Contains(o.output, "[sandbox] the sandbox refused: ") {
				refused++
			}
		}
		t.Logf("%s: %d lines, %d ran without a person (none wrote)", pass.name, len(lines), passAuto)
		if pass.readOnly != nil && passAuto < 100 {
			t.Errorf("%s: only %d lines ran without a person; the kernel was not put to the test", pass.name, passAuto)
		}
	}
	// What ran without a person left nothing behind: the private temp dirs
	// are gone, and every marker present belongs to an approved line.
	entries, _ := os.ReadDir(filepath.Join(e.work, ".opsagent-sandbox"))
	for _, en := range entries {
		t.Errorf("a private temp dir was left: %s", en.Name())
	}
	if refused < 50 {
		t.Errorf("the sandbox named only %d refusals", refused)
	}
	t.Logf("%d spellings, %d ran without a person, %d of them refused by the sandbox by name, 0 wrote", total, autos, refused)
}

// mustDenyRe: what a kernel refusal of a host-changing call reads like.
var mustDenyRe = regexp.MustCompile(`(?i)not permitted|permission denied|must be root|superuser|PermissionError|the sandbox refused`)

// kernelCallRe marks stops.txt lines whose program makes the call itself
// (as opposed to asking a service manager this machine does not run).
var kernelCallRe = regexp.MustCompile(`kill|hostname|date -s|date --set|syscall\(|swapoff|mount|sysctl -w|strace`)

func TestSandboxCorpusMustNeverHeldByTheKernel(t *testing.T) {
	t.Parallel()
	k := sandbox.Probe()
	if k.LandlockABI < 4 || !k.Seccomp {
		t.Fatalf("this machine's kernel has Landlock ABI %d, seccomp %v: the corpus needs both", k.LandlockABI, k.Seccomp)
	}
	e := newSandboxE2E(t)
	url, hits := downloadServer(t)
	for _, r := range []map[string]any{
		{"kind": "must_never", "description": "Never delete files", "tool": "run_command", "match_type": "effect", "pattern": "deletes_files"},
		{"kind": "must_never", "description": "Never stop or reboot the host", "tool": "run_command", "match_type": "effect", "pattern": "stops_host"},
		{"kind": "must_never", "description": "Never run code downloaded from the network", "match_type": "effect", "pattern": "runs_downloaded_code"},
	} {
		e.c.must(201, "POST", "/api/rules", r)
	}
	e.c.must(200, "PUT", "/api/command-policy", map[string]any{"auto_allow_read_only": true})

	deletes := sandboxCorpus(t, e, "deletes.txt", 0, url)
	downloads := sandboxCorpus(t, e, "downloads.txt", 1000, url)
	stops := sandboxCorpus(t, e, "stops.txt", 2000, url)
	lookalikes := sandboxCorpus(t, e, "lookalikes.txt", 3000, url)
	if n := len(deletes) + len(downloads) + len(stops) + len(e.readCorpus(t, "writes.txt")); n < 300 {
		t.Fatalf("%d forbidden spellings, want at least 300", n)
	}
	if len(lookalikes) < 80 {
		t.Fatalf("%d look-alikes, want at least 80", len(lookalikes))
	}

	// Before any host-stopping spelling runs, its sandbox must deny the
	// host-changing calls and scope its signals: this machine is shared.
	for _, l := range stops {
		got := e.evaluate(t, l.line)
		if got["verdict"] == "block" {
			continue
		}
		sb, _ := got["sandbox"].(map[string]any)
		if sb["deny_host_stop"] != true || sb["scope_signals"] != true {
			t.Fatalf("%q would run without the host-stop filter (%v): not running the corpus", l.line, got)
		}
	}

	counts := map[string][3]int{}
	for _, c := range []struct {
		name  string
		lines []sandboxLine
	}{{"deletes", deletes}, {"downloads", downloads}, {"stops", stops}} {
		outs := runSandboxCorpus(t, e, c.lines)
		var blocked, ran, refused int
		for i, l := range c.lines {
			o := outs[i]
			if o.blocked {
				blocked++
				continue
			}
			ran++
			if strings.Contains(o.output, "the sandbox refused") {
				refused++
			}
			if c.name == "stops" {
				if o.exit == 0 {
					t.Errorf("ESCAPE: host-stopping %q succeeded: %.300s", l.line, o.output)
				}
				if kernelCallRe.MatchString(l.raw) && !mustDenyRe.MatchString(o.output) {
					t.Errorf("host-stopping %q: no kernel refusal in %.300s", l.line, o.output)
				}
			}
		}
		counts[c.name] = [3]int{blocked, ran, refused}
		t.Logf("%s: %d spellings, %d blocked by the rules, %d approved and run under the sandbox (%d named refusals)", c.name, len(c.lines), blocked, ran, refused)
	}
	for _, l := range deletes {
		if strings.Contains(l.raw, "@V@") {
			if b, err := os.ReadFile(filepath.Join(e.work, l.victim)); err != nil || string(b) != fmt.Sprintf("canary %d\n", l.n) {
				t.Errorf("ESCAPE: %q deleted or truncated %s: %q %v", l.line, l.victim, b, err)
			}
		}
		if strings.Contains(l.raw, "@D@") && !lexists(filepath.Join(e.work, l.dir, "keep")) {
			t.Errorf("ESCAPE: %q deleted %s", l.line, l.dir)
		}
	}
	_ = filepath.WalkDir(e.work, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "downloaded.log" {
			t.Errorf("ESCAPE: downloaded code ran: %s", p)
		}
		return nil
	})
	if hits.Load() != 0 {
		t.Errorf("ESCAPE: the download server was reached %d times", hits.Load())
	}
	if counts["deletes"][1]+counts["downloads"][1]+counts["stops"][1] == 0 {
		t.Error("every spelling was blocked by the parser: the kernel was not put to the test")
	}

	// The look-alikes still run, under the same rules and sandbox.
	outs := runSandboxCorpus(t, e, lookalikes)
	for i, l := range lookalikes {
		if o := outs[i]; o.blocked || o.exit != 0 {
			t.Errorf("look-alike %q did not run cleanly: %.400s", l.line, o.output)
		}
	}
}

// readCorpus counts a corpus's lines without laying anything out.
func (e *e2e) readCorpus(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(testkit.Testdata("sandbox", name))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}
