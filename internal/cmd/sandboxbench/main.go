// Command sandboxbench measures what the command sandbox adds to starting
// a command, on the built binary: `/bin/sh -c true` started directly and
// through `opsagent sandbox-exec` under each profile the policy builds,
// alternated in one run, p50 and p99 of the wall time from start to exit.
//
//	go build -o /tmp/opsagent . && go run ./internal/cmd/sandboxbench -bin /tmp/opsagent -n 1000
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"syscall"
	"time"

	"github.com/opsagent/opsagent/server/sandbox"
)

func main() {
	bin := flag.String("bin", "", "the built opsagent binary")
	n := flag.Int("n", 1000, "runs of each")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "usage: sandboxbench -bin PATH [-n N]")
		os.Exit(2)
	}
	abi := sandbox.Probe().LandlockABI
	tmp, err := os.MkdirTemp("", "sandboxbench-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(tmp)
	cases := []struct {
		name string
		argv []string
		ns   bool
	}{
		{"unsandboxed", []string{"/bin/sh", "-c", "true"}, false},
		{"approved (host calls denied)", launcher(*bin, sandbox.Profile{DenyHostStop: true, LandlockABI: abi}), false},
		{"approved, 2 allow-paths", launcher(*bin, sandbox.Profile{DenyHostStop: true, WritePaths: []string{tmp + "/a", tmp + "/b"},
			TempDir: tmp, LandlockABI: abi}), false},
		{"read-only auto-allowed", launcher(*bin, sandbox.Profile{ReadOnly: true, DenyHostStop: true, ScopeSignals: true,
			HideSystemSockets: true, TempDir: tmp, LandlockABI: abi}), true},
		{"all three must_never rules", launcher(*bin, sandbox.Profile{DenyHostStop: true, ScopeSignals: true, HideSystemSockets: true,
			NoDelete: true, NoExecNew: true, NoNetwork: true, TempDir: tmp, LandlockABI: abi}), true},
	}
	took := make([][]time.Duration, len(cases))
	for i := 0; i < *n; i++ {
		for j, c := range cases {
			cmd := exec.Command(c.argv[0], c.argv[1:]...)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if c.ns && os.Geteuid() == 0 {
				cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWNS
			}
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v %s\n", c.name, err, out)
				os.Exit(1)
			}
			took[j] = append(took[j], time.Since(start))
		}
	}
	fmt.Printf("Landlock ABI %d, %d runs each, alternated\n", abi, *n)
	base := pct(took[0], 99)
	for j, c := range cases {
		p50, p99 := pct(took[j], 50), pct(took[j], 99)
		fmt.Printf("%-30s p50 %6.2f ms  p99 %6.2f ms  (p99 +%.2f ms)\n", c.name, ms(p50), ms(p99), ms(p99-base))
	}
}

func launcher(bin string, p sandbox.Profile) []string {
	return []string{bin, sandbox.LauncherArg, p.Encode(), "--", "/bin/sh", "-c", "true"}
}

func pct(xs []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), xs...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)*p/100]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
