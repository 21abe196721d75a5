package doctor

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm"
)

// The network checks of doctor: each bounded by a short timeout, each
// skipped with --offline.

const doctorNetTimeout = 20 * time.Second

// maxClockSkew: TOTP codes live 30 s and access tokens are checked to the
// second; a clock further off than this breaks sign-in.
const maxClockSkew = time.Minute

// dateRecorder remembers the Date header of the last response it carried,
// so the LLM check also yields a remote clock to compare with.
type dateRecorder struct {
	mu   sync.Mutex
	date time.Time
	at   time.Time
}

func (r *dateRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		if t, perr := http.ParseTime(res.Header.Get("Date")); perr == nil {
			r.mu.Lock()
			r.date, r.at = t, time.Now()
			r.mu.Unlock()
		}
	}
	return res, err
}

var remoteClock dateRecorder

func (d *doctorRun) checkLLM(ctx context.Context) {
	c := d.cfg
	if c.LLMProvider == "" {
		d.warn("llm", "no LLM configured: agent runs fail fast until one is", "set OPSAGENT_LLM_PROVIDER, OPSAGENT_LLM_MODEL, OPSAGENT_LLM_API_KEY (and OPSAGENT_LLM_BASE_URL for Ollama, vLLM, a proxy)")
		return
	}
	p, err := llm.New(llm.Config{Provider: c.LLMProvider, BaseURL: c.LLMBaseURL, APIKey: c.LLMAPIKey, Model: c.LLMModel,
		Timeout: doctorNetTimeout, Retry: llm.RetryPolicy{MaxAttempts: 1}, HTTPClient: &http.Client{Transport: &remoteClock}})
	if err != nil {
		d.fail("llm", err.Error(), "")
		return
	}
	if d.offline {
		d.ok("llm", "configured ("+c.LLMProvider+", "+c.LLMModel+"); not contacted (--offline)")
		return
	}
	// One tiny request: a single output token.
	_, err = p.Stream(ctx, llm.Request{MaxTokens: 1, Messages: []llm.Message{{Role: llm.RoleUser, Content: "Reply with OK."}}}, nil)
	if err == nil {
		d.ok("llm", c.LLMProvider+" answers with model "+c.LLMModel)
		return
	}
	fix := "check OPSAGENT_LLM_BASE_URL and that this host can reach it"
	switch llm.ClassOf(err) {
	case llm.ClassAuth:
		fix = "check OPSAGENT_LLM_API_KEY (and that the key may use this model)"
	case llm.ClassBadRequest:
		fix = "check OPSAGENT_LLM_MODEL: the provider refused the request"
	case llm.ClassRateLimit:
		fix = "the key is rate limited or out of credit; check the provider's console"
	}
	d.fail("llm", err.Error(), fix)
}

func (d *doctorRun) checkSMTP(ctx context.Context) {
	raw := d.cfg.SMTPURL
	if raw == "" {
		d.ok("smtp", "not set: mail is written to "+d.cfg.Path("outbox")+" (fine for a first install)")
		return
	}
	u, err := url.Parse(raw)
	if err != nil {
		d.fail("smtp", "OPSAGENT_SMTP_URL does not parse", "use smtp://user:pass@host:587 or smtps://user:pass@host:465")
		return
	}
	if d.offline {
		d.ok("smtp", u.Host+" configured; not contacted (--offline)")
		return
	}
	port := u.Port()
	if port == "" {
		port = map[bool]string{true: "465", false: "587"}[u.Scheme == "smtps"]
	}
	addr := net.JoinHostPort(u.Hostname(), port)
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	var conn net.Conn
	if u.Scheme == "smtps" {
		conn, err = (&tls.Dialer{NetDialer: dialer, Config: &tls.Config{ServerName: u.Hostname()}}).DialContext(ctx, "tcp", addr)
	} else {
		conn, err = dialer.DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		d.fail("smtp", "cannot connect to "+addr+": "+err.Error(), "check the host and port of OPSAGENT_SMTP_URL and the firewall")
		return
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	tp := textproto.NewConn(conn)
	if _, msg, err := tp.ReadResponse(220); err != nil {
		d.fail("smtp", addr+" did not greet as an SMTP server: "+err.Error()+" "+msg, "check that OPSAGENT_SMTP_URL names the mail server's submission port")
		return
	}
	_ = tp.PrintfLine("QUIT")
	d.ok("smtp", addr+" answers")
}

func (d *doctorRun) checkClock(ctx context.Context) {
	if d.offline {
		return
	}
	remoteClock.mu.Lock()
	date, at := remoteClock.date, remoteClock.at
	remoteClock.mu.Unlock()
	source := "the LLM endpoint"
	if date.IsZero() && d.cfg.BaseURL != "" {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		req, _ := http.NewRequestWithContext(rctx, http.MethodHead, strings.TrimRight(d.cfg.BaseURL, "/")+"/healthz", nil)
		if res, err := (&http.Client{Transport: &remoteClock}).Do(req); err == nil {
			res.Body.Close()
		}
		cancel()
		remoteClock.mu.Lock()
		date, at = remoteClock.date, remoteClock.at
		remoteClock.mu.Unlock()
		source = d.cfg.BaseURL
	}
	if date.IsZero() {
		d.warn("clock", "not compared: no remote server answered with a Date header", "make sure NTP runs (timedatectl status)")
		return
	}
	// Date has one-second resolution; allow for it and the round trip.
	skew := at.Sub(date)
	if skew < 0 {
		skew = -skew
	}
	if skew > maxClockSkew {
		d.fail("clock", fmt.Sprintf("this host's clock is %s off %s's", skew.Round(time.Second), source), "enable NTP (timedatectl set-ntp true); TOTP and token expiry need an accurate clock")
		return
	}
	d.ok("clock", fmt.Sprintf("within %s of %s", skew.Round(time.Second)+time.Second, source))
}
