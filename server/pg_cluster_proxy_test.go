package server_test

import (
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
)

// roundRobin is a small load balancer on loopback: each request goes to the
// next node in turn, as behind Caddy or nginx with no stickiness.
func roundRobin(t *testing.T, backends []string) string {
	t.Helper()
	var next atomic.Uint64
	targets := make([]*url.URL, len(backends))
	for i, b := range backends {
		u, err := url.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		targets[i] = u
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(targets[next.Add(1)%uint64(len(targets))])
			r.Out.Host = r.In.Host
		},
		FlushInterval: -1, // SSE
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: rp}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// The tenancy sweep passes against three servers behind a round-robin proxy.
func TestClusterIsolationSweep(t *testing.T) {
	nodes := newCluster(t, 3, openSignup)
	var urls []string
	for _, n := range nodes {
		urls = append(urls, n.URL)
	}
	nodes[0].URL = roundRobin(t, urls)
	isolationSweep(t, nodes[0])
}
