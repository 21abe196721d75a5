// Command sandboxbench measures what the command sandbox adds to starting
// a command, on the built binary, with an unsandboxed start of the same
// command alternated in the same run; p50 and p99 of the wall time from
// start to exit.
//
// On the server: `/bin/sh -c true` started directly and through
// sandbox.Command under each profile the policy builds: from a restricted
// thread of this process, through the helper (the built binary, started
// once in the private mount namespace) or through the launcher (the built
// binary started for each command).
//
// Through a connector: the built binary runs as a real connector
// (`BIN connector`) dialled into a hub in this process, and each round
// runs `true` on it under an approved and a read-only profile. The host's
// own measure of the command (start to exit, through its sandbox.Command)
// is its sandboxed exec; the rest of the round trip is the network and
// framing, shown beside a bare WebSocket echo of a frame of the same size.
//
//	CGO_ENABLED=0 go build -o /tmp/opsagent . && go run ./internal/cmd/sandboxbench -bin /tmp/opsagent -n 500
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/coder/websocket"

	"github.com/opsagent/opsagent/server/connector"
	"github.com/opsagent/opsagent/server/sandbox"
)

func main() {
	sandbox.Init()
	bin := flag.String("bin", "", "the built opsagent binary")
	n := flag.Int("n", 1000, "runs of each")
	noConnector := flag.Bool("no-connector", false, "skip the connector rows")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "usage: sandboxbench -bin PATH [-n N] [-no-connector]")
		os.Exit(2)
	}
	abi := sandbox.Probe().LandlockABI
	tmp, err := os.MkdirTemp("", "sandboxbench-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(tmp)
	// A private temp dir where the product makes them (sandbox.TempDir),
	// for every profile, as run_command and the connector give one.
	own, _, err := sandbox.TempDir(tmp)
	if err != nil {
		panic(err)
	}
	readOnly := sandbox.Profile{ReadOnly: true, DenyHostStop: true, ScopeSignals: true, HideSystemSockets: true, TempDir: own, LandlockABI: abi}
	profiles := []struct {
		name string
		p    sandbox.Profile
	}{
		{"approved (host calls denied)", sandbox.Profile{DenyHostStop: true, TempDir: own, LandlockABI: abi}},
		{"approved, 2 allow-paths", sandbox.Profile{DenyHostStop: true, WritePaths: []string{tmp + "/a", tmp + "/b"},
			TempDir: own, LandlockABI: abi}},
		{"read-only auto-allowed", readOnly},
		{"all three must_never rules", sandbox.Profile{DenyHostStop: true, ScopeSignals: true, HideSystemSockets: true,
			NoDelete: true, NoExecNew: true, NoNetwork: true, TempDir: own, LandlockABI: abi}},
	}
	type row struct {
		name string
		run  func() time.Duration
		took []time.Duration
	}
	rows := []*row{{name: "unsandboxed", run: func() time.Duration {
		cmd := exec.Command("/bin/sh", "-c", "true")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		return timed(cmd)
	}}}
	for _, pr := range profiles {
		p := pr.p
		rows = append(rows, &row{name: pr.name, run: func() time.Duration {
			cmd, err := sandbox.Command(context.Background(), p, "/bin/sh", "-c", "true")
			if err != nil {
				fail(err)
			}
			// The product's own command, with the built binary as its
			// launcher where it needs one.
			cmd.Path, cmd.Args[0] = *bin, *bin
			return timed(cmd)
		}})
	}
	// What the in-process start and the helper save: the approved and
	// read-only profiles forced through the launcher (the embedded
	// exec.Cmd is the launcher's).
	for _, forced := range []struct {
		name string
		p    sandbox.Profile
	}{{"approved, through the launcher", profiles[0].p}, {"read-only, through the launcher", readOnly}} {
		p := forced.p
		rows = append(rows, &row{name: forced.name, run: func() time.Duration {
			cmd, err := sandbox.Command(context.Background(), p, "/bin/sh", "-c", "true")
			if err != nil {
				fail(err)
			}
			cmd.Path, cmd.Args[0] = *bin, *bin
			return timed(cmd.Cmd)
		}})
	}
	var conn *connectorRig
	if !*noConnector {
		conn = startConnector(*bin, tmp)
		defer conn.stop()
		for _, c := range []struct {
			name string
			p    *sandbox.Profile
		}{{"connector: approved", nil}, {"connector: read-only", &readOnly}} {
			r := &row{name: c.name + " (host exec)"}
			rt := &row{name: c.name + " (rest of round trip)"}
			r.run = func() time.Duration {
				host, total := conn.call(c.p)
				rt.took = append(rt.took, total-host)
				return host
			}
			rows = append(rows, r, rt) // rt has no run of its own: r fills it
		}
		rows = append(rows, &row{name: "bare WebSocket echo", run: conn.echo})
	}
	for i := 0; i < *n; i++ {
		for _, r := range rows {
			if r.run != nil {
				r.took = append(r.took, r.run())
			}
		}
	}
	out, _ := exec.Command("uptime").Output()
	fmt.Printf("Landlock ABI %d, %d runs each, alternated; %s", abi, *n, out)
	base := pct(rows[0].took, 99)
	for _, r := range rows {
		p50, p99 := pct(r.took, 50), pct(r.took, 99)
		fmt.Printf("%-45s p50 %6.2f ms  p99 %6.2f ms  (p99 %+.2f ms vs unsandboxed)\n", r.name, ms(p50), ms(p99), ms(p99-base))
	}
}

func timed(cmd interface{ CombinedOutput() ([]byte, error) }) time.Duration {
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		fail(fmt.Errorf("%v %s", err, out))
	}
	return time.Since(start)
}

// connectorRig is a hub in this process with the built binary connected
// to it as a connector.
type connectorRig struct {
	hub   *connector.Hub
	srv   *httptest.Server
	agent *exec.Cmd
	ws    *websocket.Conn
	frame []byte
}

func startConnector(bin, workDir string) *connectorRig {
	c := &connectorRig{hub: connector.NewHub(connector.Options{})}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		if strings.HasSuffix(r.URL.Path, "/echo") {
			ctx := context.Background()
			for {
				typ, data, err := ws.Read(ctx)
				if err != nil || ws.Write(ctx, typ, data) != nil {
					return
				}
			}
		}
		c.hub.Serve(context.Background(), ws, connector.Identity{ConnectorID: "bench", Name: "bench"}, "127.0.0.1")
	}))
	c.agent = exec.Command(bin, "connector", "--server", c.srv.URL, "--token", "ocn_bench", "--work-dir", workDir, "--log-level", "error")
	c.agent.Stderr = os.Stderr
	if err := c.agent.Start(); err != nil {
		fail(err)
	}
	for deadline := time.Now().Add(30 * time.Second); !c.hub.Status("bench").Online; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			fail(fmt.Errorf("the connector did not come online"))
		}
	}
	ws, _, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(c.srv.URL, "http")+"/echo", nil)
	if err != nil {
		fail(err)
	}
	c.ws = ws
	c.frame = connector.Encode(&connector.Frame{Type: connector.TypeRun, CallID: "0123456789abcdef0123456789abcdef",
		Run: &connector.Run{Command: "true", TimeoutMS: 10000, MaxOutput: 1 << 20}})
	return c
}

// call runs `true` on the connector: the host's measure of the command
// and the whole round trip.
func (c *connectorRig) call(p *sandbox.Profile) (host, total time.Duration) {
	t0 := time.Now()
	res, err := c.hub.Call(context.Background(), "bench", connector.Run{Command: "true", TimeoutMS: 10000, MaxOutput: 1 << 20, Sandbox: p}, io.Discard)
	total = time.Since(t0)
	if err != nil || res.ExitCode != 0 {
		fail(fmt.Errorf("connector call: %+v %v", res, err))
	}
	return time.Duration(res.DurationUS) * time.Microsecond, total
}

func (c *connectorRig) echo() time.Duration {
	t0 := time.Now()
	if err := c.ws.Write(context.Background(), websocket.MessageText, c.frame); err != nil {
		fail(err)
	}
	if _, _, err := c.ws.Read(context.Background()); err != nil {
		fail(err)
	}
	return time.Since(t0)
}

func (c *connectorRig) stop() {
	c.ws.CloseNow()
	_ = c.agent.Process.Kill()
	_ = c.agent.Wait()
	c.srv.Close()
	c.hub.Close()
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "sandboxbench:", err)
	os.Exit(1)
}

func pct(xs []time.Duration, p int) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), xs...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)*p/100]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
