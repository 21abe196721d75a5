package tools

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrBlockedAddress is wrapped by every refusal of the egress guard.
var ErrBlockedAddress = errors.New("address not allowed")

// Egress says which addresses outbound HTTP may reach. By default only
// public unicast addresses: loopback, private, link-local (cloud metadata),
// shared, multicast and reserved ranges are refused, checked on the address
// actually connected to (after DNS, on every redirect hop), so a name that
// resolves to 127.0.0.1 or a redirect to it is refused like the literal.
type Egress struct {
	// Allow lists ranges let through even though they are not public.
	Allow []netip.Prefix
	// AllowHosts lists host names whose addresses are let through whatever
	// they resolve to (a project's internal service names).
	AllowHosts []string
	// AllowPrivate lets through loopback, private and shared ranges (for
	// integrations an admin configured); link-local, multicast and reserved
	// ranges stay refused unless in Allow.
	AllowPrivate bool
	// Lookup resolves host names; nil uses net.DefaultResolver.
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
}

// ParseAllowlist reads allow-list entries: CIDRs, single addresses or host
// names. It returns an error naming the first bad entry.
func ParseAllowlist(entries []string) (prefixes []netip.Prefix, hosts []string, err error) {
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if p, err := netip.ParsePrefix(e); err == nil {
			prefixes = append(prefixes, p.Masked())
			continue
		}
		if a, err := netip.ParseAddr(e); err == nil {
			prefixes = append(prefixes, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		if !validHostName(e) {
			return nil, nil, fmt.Errorf("%q is neither a CIDR, an address nor a host name", e)
		}
		if _, ok := looseIPv4(e); ok {
			return nil, nil, fmt.Errorf("%q is a non-canonical IPv4 spelling; write the address in dotted decimal", e)
		}
		hosts = append(hosts, strings.ToLower(strings.TrimSuffix(e, ".")))
	}
	return prefixes, hosts, nil
}

func validHostName(h string) bool {
	h = strings.TrimSuffix(h, ".")
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// special ranges that are neither public nor covered by netip's predicates.
var special = []struct {
	p       netip.Prefix
	reason  string
	private bool // AllowPrivate lets it through
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "this-network", false},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (carrier-grade NAT)", true},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments", false},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation", false},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking", false},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation", false},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation", false},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved", false},
	{netip.MustParsePrefix("100::/64"), "discard", false},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation", false},
}

// embedded returns the IPv4 address some IPv6 forms carry (NAT64, 6to4,
// IPv4-compatible), which reach that IPv4 address through a translator.
func embedded(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() {
		return netip.Addr{}, false
	}
	b := a.As16()
	switch {
	case netip.MustParsePrefix("64:ff9b::/96").Contains(a), netip.MustParsePrefix("::/96").Contains(a) && !a.IsUnspecified() && !a.IsLoopback():
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	case netip.MustParsePrefix("2002::/16").Contains(a):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), true
	}
	return netip.Addr{}, false
}

// classify names the non-public range a is in, "" for a public address.
// private reports whether the range is one AllowPrivate lets through.
func classify(a netip.Addr) (reason string, private bool) {
	a = a.Unmap() // ::ffff:127.0.0.1 is 127.0.0.1
	if v4, ok := embedded(a); ok {
		if r, p := classify(v4); r != "" {
			return r + " (embedded in " + a.String() + ")", p
		}
	}
	switch {
	case a.IsLoopback():
		return "loopback", true
	case a.IsPrivate():
		return "private", true
	case a.IsLinkLocalUnicast():
		return "link-local", false
	case a.IsUnspecified():
		return "unspecified", false
	case a.IsMulticast(), a.IsLinkLocalMulticast(), a.IsInterfaceLocalMulticast():
		return "multicast", false
	}
	for _, s := range special {
		if s.p.Contains(a) {
			return s.reason, s.private
		}
	}
	return "", false
}

// CheckAddr decides one address reached for host (the name in the URL).
func (e *Egress) CheckAddr(host string, a netip.Addr) error {
	a = a.Unmap()
	for _, p := range e.Allow {
		if p.Contains(a) {
			return nil
		}
	}
	reason, private := classify(a)
	if reason == "" {
		return nil
	}
	if private && e.AllowPrivate {
		return nil
	}
	if e.hostAllowed(host) {
		return nil
	}
	return fmt.Errorf("%w: %s resolves to %s, a %s address; a project admin can allow-list it", ErrBlockedAddress, host, a, reason)
}

func (e *Egress) hostAllowed(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, h := range e.AllowHosts {
		if h == host {
			return true
		}
	}
	return false
}

// CheckURL refuses what no dial should even try: other schemes, user info,
// zones, and IPv4 spellings other than dotted decimal (2130706433, 0x7f.1,
// 0177.0.0.1), which some resolvers and browsers decode to an address.
func CheckURL(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%w: only http and https URLs, not %q", ErrBlockedAddress, u.Scheme)
	}
	if u.User != nil {
		return fmt.Errorf("%w: credentials in the URL are not accepted; use a header", ErrBlockedAddress)
	}
	host := u.Hostname()
	if host == "" {
		return fmt.Errorf("%w: the URL has no host", ErrBlockedAddress)
	}
	if strings.Contains(host, "%") {
		return fmt.Errorf("%w: IPv6 zones are not accepted", ErrBlockedAddress)
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return nil
	}
	if a, ok := looseIPv4(host); ok {
		return fmt.Errorf("%w: %q is a non-canonical spelling of %s; write addresses in dotted decimal", ErrBlockedAddress, host, a)
	}
	if !validHostName(host) {
		return fmt.Errorf("%w: %q is not a valid host name", ErrBlockedAddress, host)
	}
	return nil
}

// looseIPv4 decodes host the way inet_aton does (1 to 4 parts, each
// decimal, octal with a leading 0, or hex with 0x); ok only when host is
// such a spelling.
func looseIPv4(host string) (netip.Addr, bool) {
	parts := strings.Split(strings.TrimSuffix(host, "."), ".")
	if len(parts) == 0 || len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		base, digits := 10, p
		switch {
		case strings.HasPrefix(strings.ToLower(p), "0x"):
			base, digits = 16, p[2:]
		case len(p) > 1 && p[0] == '0':
			base, digits = 8, p[1:]
		}
		if digits == "" && base != 16 {
			return netip.Addr{}, false
		}
		if digits == "" {
			digits = "0"
		}
		v, err := strconv.ParseUint(digits, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	var n uint64
	last := len(vals) - 1
	for i, v := range vals[:last] {
		if v > 255 {
			return netip.Addr{}, false
		}
		n |= v << (24 - 8*uint(i))
	}
	if vals[last] >= 1<<(8*uint(4-last)) {
		return netip.Addr{}, false
	}
	n |= vals[last]
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

// DialContext resolves the host itself, checks every address, and dials a
// checked one; the dialer's Control checks the socket's address once more,
// so nothing between the check and the connect (DNS rebinding) slips by.
func (e *Egress) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		if _, loose := looseIPv4(host); loose || !validHostName(host) {
			return nil, fmt.Errorf("%w: %q", ErrBlockedAddress, host)
		}
		lookup := e.Lookup
		if lookup == nil {
			lookup = func(ctx context.Context, h string) ([]netip.Addr, error) {
				return net.DefaultResolver.LookupNetIP(ctx, "ip", h)
			}
		}
		if addrs, err = lookup(ctx, host); err != nil {
			return nil, err
		}
	}
	var lastErr error = fmt.Errorf("no address for %s", host)
	for _, a := range addrs {
		if err := e.CheckAddr(host, a); err != nil {
			lastErr = err
			continue
		}
		d := net.Dialer{Timeout: 10 * time.Second, Control: func(_, sockAddr string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(sockAddr)
			if err != nil {
				return fmt.Errorf("%w: unparseable socket address %q", ErrBlockedAddress, sockAddr)
			}
			return e.CheckAddr(host, ap.Addr())
		}}
		conn, err := d.DialContext(ctx, network, netip.AddrPortFrom(a.Unmap(), mustPort(port)).String())
		if err == nil {
			return conn, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func mustPort(p string) uint16 {
	n, _ := strconv.ParseUint(p, 10, 16)
	return uint16(n)
}

// MaxRedirects bounds the redirects one request follows.
const MaxRedirects = 5

// Client returns an HTTP client that only reaches what e allows: no proxy
// (a proxy would connect on its behalf), every hop's URL checked, every
// connection dialed through DialContext.
func (e *Egress) Client(timeout time.Duration) *http.Client {
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           e.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          10,
		IdleConnTimeout:       30 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: timeout,
	}
	return &http.Client{Transport: tr, Timeout: timeout, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= MaxRedirects {
			return fmt.Errorf("stopped after %d redirects", MaxRedirects)
		}
		return CheckURL(req.URL)
	}}
}
