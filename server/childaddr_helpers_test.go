package server_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/opsagent/opsagent/internal/testkit"
)

// A port picked free by the test and handed to a child process can be
// taken by someone else before the child binds it (CI met this with
// stripe-mock). So the tools are started on 127.0.0.1:0 and the test
// reads the address they bound from their log.
var (
	// Prometheus and Alertmanager (exporter-toolkit), at info level.
	promListening = regexp.MustCompile(`msg="Listening on" address=(\S+)`)
	// stripe-mock.
	stripeMockListening = regexp.MustCompile(`Listening for HTTP at address: (\S+)`)
)

// childAddr waits (generously: a loaded machine starts tools slowly) for
// re in the output of a child process and returns its first group; exited
// is closed when the child has exited (then it never will).
func childAddr(t *testing.T, what string, out *testkit.SyncBuffer, re *regexp.Regexp, exited <-chan struct{}) string {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			return m[1]
		}
		select {
		case <-exited:
			if m := re.FindStringSubmatch(out.String()); m != nil {
				return m[1]
			}
			t.Fatalf("%s exited before listening:\n%s", what, out.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not say where it listens:\n%s", what, out.String())
		}
	}
}
