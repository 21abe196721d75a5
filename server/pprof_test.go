package server

import (
	"io"
	"net"
	"net/http"
	"testing"
)

func TestPprofAddrLoopbackOnly(t *testing.T) {
	for addr, ok := range map[string]bool{"": true, "127.0.0.1:6060": true, "[::1]:6060": true, "localhost:6060": true,
		"0.0.0.0:6060": false, ":6060": false, "10.0.0.1:6060": false, "example.com:6060": false, "127.0.0.1": false} {
		c := &Config{PprofAddr: addr}
		if errs := c.validatePprof(); (len(errs) == 0) != ok {
			t.Errorf("pprof-addr %q: errors %v, want ok=%v", addr, errs, ok)
		}
	}
}

// TestPprofServesProfiles: the switch serves the runtime's profiles on its
// own listener (never on the API's), and a CPU profile of a second.
func TestPprofServesProfiles(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: pprofHandler()}
	go hs.Serve(ln)
	defer hs.Close()
	base := "http://" + ln.Addr().String() + "/debug/pprof/"
	for path, want := range map[string]int{"heap": 200, "goroutine": 200, "profile?seconds=1": 200, "nosuch": 404} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want || (want == 200 && len(b) == 0) {
			t.Errorf("%s: %d with %d bytes, want %d", path, resp.StatusCode, len(b), want)
		}
	}
}
