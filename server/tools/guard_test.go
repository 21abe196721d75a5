package tools

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

func TestClassifyRefusesNonPublicAddresses(t *testing.T) {
	e := &Egress{}
	for _, tc := range []struct{ addr, want string }{
		{"127.0.0.1", "loopback"},
		{"127.255.0.9", "loopback"},
		{"::1", "loopback"},
		{"10.1.2.3", "private"},
		{"172.16.0.1", "private"},
		{"192.168.1.1", "private"},
		{"fd00::1", "private"},
		{"169.254.169.254", "link-local"},
		{"fe80::1", "link-local"},
		{"::ffff:127.0.0.1", "loopback"},         // IPv4-mapped IPv6
		{"::ffff:169.254.169.254", "link-local"}, // IPv4-mapped metadata address
		{"::ffff:10.0.0.1", "private"},
		{"64:ff9b::7f00:1", "loopback"}, // NAT64 of 127.0.0.1
		{"2002:7f00:1::", "loopback"},   // 6to4 of 127.0.0.1
		{"0.0.0.0", "unspecified"},
		{"0.1.2.3", "this-network"},
		{"100.64.0.1", "carrier-grade"},
		{"224.0.0.1", "multicast"},
		{"255.255.255.255", "reserved"},
	} {
		err := e.CheckAddr("h", netip.MustParseAddr(tc.addr))
		if !errors.Is(err, ErrBlockedAddress) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want a refusal naming %q", tc.addr, err, tc.want)
		}
	}
	for _, public := range []string{"93.184.216.34", "1.1.1.1", "2606:4700::1111"} {
		if err := e.CheckAddr("h", netip.MustParseAddr(public)); err != nil {
			t.Errorf("%s refused: %v", public, err)
		}
	}
}

func TestAllowlistAndAllowPrivate(t *testing.T) {
	prefixes, hosts, err := ParseAllowlist([]string{"10.0.0.0/8", "192.168.1.5", "Grafana.internal"})
	if err != nil {
		t.Fatal(err)
	}
	e := &Egress{Allow: prefixes, AllowHosts: hosts}
	for _, ok := range []struct{ host, addr string }{{"x", "10.9.9.9"}, {"x", "192.168.1.5"}, {"grafana.internal", "172.20.0.3"}} {
		if err := e.CheckAddr(ok.host, netip.MustParseAddr(ok.addr)); err != nil {
			t.Errorf("%s %s: %v", ok.host, ok.addr, err)
		}
	}
	if err := e.CheckAddr("x", netip.MustParseAddr("192.168.1.6")); err == nil {
		t.Error("an address outside the allow-list got through")
	}
	if _, _, err := ParseAllowlist([]string{"2130706433"}); err == nil {
		t.Error("a decimal IPv4 spelling was accepted as a host name")
	}
	priv := &Egress{AllowPrivate: true}
	if err := priv.CheckAddr("x", netip.MustParseAddr("10.0.0.1")); err != nil {
		t.Error(err)
	}
	if err := priv.CheckAddr("x", netip.MustParseAddr("169.254.169.254")); err == nil {
		t.Error("AllowPrivate let the metadata address through")
	}
}

func TestCheckURLRefusesLooseIPv4Spellings(t *testing.T) {
	for _, raw := range []string{
		"http://2130706433/",       // decimal 127.0.0.1
		"http://017700000001/",     // octal
		"http://0177.0.0.1/",       // octal first part
		"http://0x7f.0.0.1/",       // hex part
		"http://0x7f000001/",       // hex whole
		"http://127.1/",            // short form
		"http://2852039166/latest", // decimal 169.254.169.254
		"file:///etc/passwd",
		"http://user:pw@example.com/",
		"http://[fe80::1%25eth0]/",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			continue
		}
		if err := CheckURL(u); !errors.Is(err, ErrBlockedAddress) {
			t.Errorf("%s: got %v, want refusal", raw, err)
		}
	}
	if a, ok := looseIPv4("0x7f.1"); !ok || a != netip.MustParseAddr("127.0.0.1") {
		t.Errorf("0x7f.1 decoded to %v %v", a, ok)
	}
	for _, fine := range []string{"http://example.com/x", "https://1.1.1.1/", "http://[2606:4700::1111]/"} {
		u, _ := url.Parse(fine)
		if err := CheckURL(u); err != nil {
			t.Errorf("%s: %v", fine, err)
		}
	}
}

// resolverFor maps names to the loopback test servers, standing in for DNS.
func resolverFor(names map[string]string) func(context.Context, string) ([]netip.Addr, error) {
	return func(_ context.Context, h string) ([]netip.Addr, error) {
		if a, ok := names[h]; ok {
			return []netip.Addr{netip.MustParseAddr(a)}, nil
		}
		return nil, errors.New("no such host")
	}
}

func TestHTTPRequestGuardAtConnectAndAfterRedirect(t *testing.T) {
	secret := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("INTERNAL-ONLY"))
	}))
	defer secret.Close()
	port := secret.URL[strings.LastIndex(secret.URL, ":")+1:]
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-loopback":
			http.Redirect(w, r, secret.URL+"/", http.StatusFound)
		case "/to-localhost":
			http.Redirect(w, r, "http://localhost:"+port+"/", http.StatusFound)
		case "/to-decimal":
			http.Redirect(w, r, "http://2130706433:"+port+"/", http.StatusFound)
		default:
			_, _ = w.Write([]byte("front page"))
		}
	}))
	defer front.Close()
	frontPort := front.URL[strings.LastIndex(front.URL, ":")+1:]
	// public.test stands for a public site: allow-listed by name, so only
	// what it resolves to passes, not where it redirects.
	e := &Egress{AllowHosts: []string{"public.test"},
		Lookup: resolverFor(map[string]string{"public.test": "127.0.0.1", "localhost": "127.0.0.1", "sneaky.test": "127.0.0.1"})}
	tool := &HTTPRequest{Egress: e}
	call := func(u string) (string, error) {
		args, _ := json.Marshal(map[string]any{"method": "GET", "url": u})
		return tool.Run(context.Background(), args)
	}
	out, err := call("http://public.test:" + frontPort + "/")
	if err != nil || !strings.Contains(out, "front page") {
		t.Fatalf("allowed host: %q %v", out, err)
	}
	for _, u := range []string{
		"http://public.test:" + frontPort + "/to-loopback",
		"http://public.test:" + frontPort + "/to-localhost",
		"http://public.test:" + frontPort + "/to-decimal",
		secret.URL,                                // loopback literal
		"http://sneaky.test:" + port + "/",        // a name resolving to loopback
		"http://[::ffff:127.0.0.1]:" + port + "/", // IPv4-mapped IPv6
		"http://2130706433:" + port + "/",
		"http://0177.0.0.1:" + port + "/",
	} {
		out, err := call(u)
		if err == nil || !strings.Contains(err.Error(), "not allowed") || strings.Contains(out, "INTERNAL-ONLY") {
			t.Errorf("%s: got %q, %v; want a refusal", u, out, err)
		}
	}
}

func TestHTTPRequestReadOnlyByMethod(t *testing.T) {
	h := &HTTPRequest{}
	if !h.ReadOnlyCall(json.RawMessage(`{"method":"GET","url":"http://x.test/"}`)) {
		t.Error("GET should read only")
	}
	if h.ReadOnlyCall(json.RawMessage(`{"method":"DELETE","url":"http://x.test/"}`)) {
		t.Error("DELETE should not read only")
	}
	r, err := h.Render(json.RawMessage(`{"method":"POST","url":"https://api.test/deploy"}`))
	if err != nil || r.Command != "POST https://api.test/deploy" || r.Target != "api.test" {
		t.Errorf("render: %+v %v", r, err)
	}
}
