package main

import (
	"io"
	"log/slog"
	"net/http"
	"testing"
)

// The profiling switch is off when unset, refuses a non-loopback address
// and serves profiles on a loopback one.
func TestPprofSwitchLoopbackOnly(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if addr, err := startPprof("", log); addr != "" || err != nil {
		t.Fatalf("unset: %q %v", addr, err)
	}
	for _, bad := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0", "example.com:0"} {
		if _, err := startPprof(bad, log); err == nil {
			t.Fatalf("%s accepted", bad)
		}
	}
	addr, err := startPprof("127.0.0.1:0", log)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.Get("http://" + addr + "/debug/pprof/heap")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || len(b) == 0 {
		t.Fatalf("heap profile: %d, %d bytes", res.StatusCode, len(b))
	}
}
