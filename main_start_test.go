package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/internal/testkit"
)

// serveOnce runs the built binary's serve to its end (it must fail) and
// returns what it printed.
func serveOnce(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(testkit.SharedBinary(t), append([]string{"serve"}, args...)...)
	cmd.Env = append(os.Environ(), "OPSAGENT_LOG_LEVEL=info")
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("serve %v did not end:\n%s", args, out)
	}
	if err == nil {
		t.Fatalf("serve %v exited 0:\n%s", args, out)
	}
	return string(out)
}

// A start that cannot serve says which setting to change and leaves no
// data directory behind (no database, keys, vault or index).
func TestFailedStartsCreateNothingAndNameTheSetting(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"port in use", []string{"--addr", busy.Addr().String()}, []string{"cannot listen on " + busy.Addr().String(), "--addr", "OPSAGENT_ADDR"}},
		{"address without a port", []string{"--addr", "localhost"}, []string{"HOST:PORT", "--addr", "OPSAGENT_ADDR"}},
		{"not a postgres URL", []string{"--addr", "127.0.0.1:0", "--database-url", "mysql://u:p@db/x"}, []string{"must start with postgres://"}},
		{"database not reachable", []string{"--addr", "127.0.0.1:0", "--database-url", "postgres://u:secret-pw@127.0.0.1:1/x?connect_timeout=5"},
			[]string{"cannot connect to the database", "--database-url"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			out := serveOnce(t, append(c.args, "--data-dir", dir)...)
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("the error does not say %q:\n%s", w, out)
				}
			}
			if strings.Contains(out, "rag store closed") || strings.Contains(out, "secret-pw") {
				t.Errorf("misleading or secret output:\n%s", out)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				entries, _ := os.ReadDir(dir)
				t.Errorf("the failed start left the data dir (%v): %v", err, entries)
			}
		})
	}
}

// A second server on a data directory in use is refused, clearly, and the
// first goes on serving.
func TestSecondServerOnTheSameDataDirIsRefused(t *testing.T) {
	bin := testkit.SharedBinary(t)
	dir := filepath.Join(t.TempDir(), "data")
	first := testkit.StartProcess(t, bin, []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dir}, nil)
	out := serveOnce(t, "--addr", "127.0.0.1:0", "--data-dir", dir)
	if !strings.Contains(out, "is in use by another opsagent serve") || !strings.Contains(out, "--data-dir") || strings.Contains(out, "opsagent listening") {
		t.Fatalf("second server:\n%s", out)
	}
	if status, _ := testkit.Do(t, "GET", first.URL+"/api/version", "", "", nil); status != 200 {
		t.Fatalf("the first server after the refusal: %d", status)
	}
	// Once the first has stopped, the directory is free again.
	first.Stop()
	again := testkit.StartProcess(t, bin, []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dir}, nil)
	again.Stop()
}
