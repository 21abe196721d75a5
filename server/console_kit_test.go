package server_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"github.com/opsagent/opsagent/server"
)

// consoleEnv is a server reached by the browser at http://localhost:PORT:
// WebAuthn refuses IP addresses as relying-party ids, so a loopback
// reverse proxy (what a deployment's load balancer is) listens on a port
// chosen before the server is configured with it as its base URL.
func consoleEnv(t *testing.T, opts ...func(*server.Config)) (*testEnv, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	base := "http://localhost:" + port
	env := newEnv(t, append(opts, func(c *server.Config) { c.BaseURL = base })...)
	target, _ := url.Parse(env.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1
	hs := &http.Server{Handler: proxy, ReadHeaderTimeout: 5 * time.Second}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return env, base
}

// axeSource is axe-core, vendored by web/vendor.sh for the tests only.
func axeSource(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "web", "testdata", "axe.min.js"))
	if err != nil {
		t.Fatalf("axe-core missing (run web/vendor.sh): %v", err)
	}
	return string(b)
}

// checkA11y runs axe-core inside the page and fails on any serious or
// critical violation, naming the rule and the offending elements.
func checkA11y(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	have, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`typeof window.axe === 'object'`))
	if !have {
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](axeSource(t)+";0")); err != nil {
			t.Fatalf("inject axe: %v", err)
		}
	}
	const run = `axe.run(document, {resultTypes: ['violations']}).then(r => r.violations
		.filter(v => v.impact === 'serious' || v.impact === 'critical')
		.map(v => v.impact + ' ' + v.id + ': ' + v.help + ' [' + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(' | ') + ']'))`
	found, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](run, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("axe on %s: %v", page, err)
	}
	if len(found) > 0 {
		t.Errorf("axe on %s: %d serious or critical violation(s):\n  %s", page, len(found), strings.Join(found, "\n  "))
	}
}

// Viewports of the screenshots: a laptop and a phone.
var shotSizes = []struct {
	name string
	w, h int64
}{{"desktop", 1400, 900}, {"phone", 390, 844}}

// visit checks a page the walk has reached: axe-core in the light and the
// dark theme, and at phone width
// nothing wider than the screen (wide tables scroll inside themselves);
// with OPSAGENT_SCREENSHOT_DIR set, screenshots at both sizes. The
// viewport is restored to w x h afterwards.
func visit(t *testing.T, ctx context.Context, name string, w, h int64) {
	t.Helper()
	waitSettled(t, ctx) // what the page loads has arrived and is drawn
	checkA11y(t, ctx, name)
	dir := os.Getenv("OPSAGENT_SCREENSHOT_DIR")
	// The dark theme (system preference) must be as readable as the light one.
	colorScheme(t, ctx, "dark")
	waitSettled(t, ctx) // charts redraw in the other theme's colours
	checkA11y(t, ctx, name+" (dark)")
	if dir != "" {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+"-dark.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	colorScheme(t, ctx, "")
	for _, s := range shotSizes {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(s.w, s.h)); err != nil {
			t.Fatal(err)
		}
		waitSettled(t, ctx) // charts redraw on resize
		if s.w < 500 {
			over, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`document.documentElement.scrollWidth <= window.innerWidth + 1 ? [] :
				[...document.querySelectorAll('main *')].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
				.slice(-4).map(e => e.tagName + (e.id ? '#' + e.id : '') + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))
				.concat(['page width ' + document.documentElement.scrollWidth])`))
			if err != nil {
				t.Fatal(err)
			}
			if len(over) > 0 {
				t.Errorf("%s is wider than a %dpx phone: %v", name, s.w, over)
			}
		}
		if dir == "" {
			continue
		}
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+"-"+s.name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(w, h)); err != nil {
		t.Fatal(err)
	}
}

// clickNav follows a link of the main navigation.
func clickNav(t *testing.T, ctx context.Context, href string) {
	t.Helper()
	if err := chromedp.Do(ctx, click(`#nav a[href="`+href+`"]`)); err != nil {
		t.Fatalf("nav %s: %v", href, err)
	}
}

// js runs a statement in the page.
func js(t *testing.T, ctx context.Context, expr string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](expr)); err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
}

// addVirtualAuthenticator gives the tab Chrome's virtual security key
// (DevTools WebAuthn domain): it answers navigator.credentials like a
// USB key that the user touches at once.
func addVirtualAuthenticator(t *testing.T, ctx context.Context) {
	t.Helper()
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := cdp.Call(ctx, tg, webauthn.Enable, webauthn.EnableParams{}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, tg, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{
			Options: &webauthn.VirtualAuthenticatorOptions{Protocol: webauthn.AuthenticatorProtocolCtap2, Transport: webauthn.AuthenticatorTransportUsb,
				HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true}})
		return err
	}))
	if err != nil {
		t.Fatalf("virtual authenticator: %v", err)
	}
}

// colorScheme emulates the system's light or dark preference ("" resets).
func colorScheme(t *testing.T, ctx context.Context, scheme string) {
	t.Helper()
	p := emulation.SetEmulatedMediaParams{}
	if scheme != "" {
		p.Features = []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}
	}
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, p)
		return err
	}))
	if err != nil {
		t.Fatalf("emulate %q colour scheme: %v", scheme, err)
	}
}
