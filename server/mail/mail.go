// Package mail sends the product's few messages (reset, verify, invitations):
// over SMTP when configured, otherwise as RFC 5322 files in the outbox so a
// fresh install still works offline.
package mail

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"mime"
	"net"
	"net/smtp"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Message is one plain-text mail.
type Message struct {
	To      string
	Subject string
	Body    string
}

// Sender delivers messages.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// New returns an SMTP sender for smtpURL, or an outbox writer under outboxDir when it is empty.
func New(smtpURL, from, outboxDir string, log *slog.Logger) (Sender, error) {
	if smtpURL == "" {
		if err := os.MkdirAll(outboxDir, 0o700); err != nil {
			return nil, err
		}
		return &Outbox{Dir: outboxDir, From: from, Log: log}, nil
	}
	u, err := url.Parse(smtpURL)
	if err != nil {
		return nil, err
	}
	return &SMTP{URL: u, From: from}, nil
}

func render(from string, m Message, now time.Time) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "From: %s\r\n", from)
	fmt.Fprintf(&b, "To: %s\r\n", m.To)
	fmt.Fprintf(&b, "Subject: %s\r\n", mime.QEncoding.Encode("utf-8", m.Subject))
	fmt.Fprintf(&b, "Date: %s\r\n", now.Format(time.RFC1123Z))
	fmt.Fprintf(&b, "Message-ID: <%s@opsagent>\r\n", uuid.NewString())
	b.WriteString("MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n")
	b.WriteString(strings.ReplaceAll(m.Body, "\n", "\r\n"))
	return []byte(b.String())
}

// checkHeaders refuses header values that would start a new header line.
func checkHeaders(m Message) error {
	if strings.ContainsAny(m.To, "\r\n") || strings.ContainsAny(m.Subject, "\r\n") {
		return fmt.Errorf("mail: line break in a header value")
	}
	return nil
}

// Outbox writes each message as a .eml file and logs its subject (never its body: it holds tokens).
type Outbox struct {
	Dir  string
	From string
	Log  *slog.Logger
}

// Send writes the message atomically.
func (o *Outbox) Send(_ context.Context, m Message) error {
	if err := checkHeaders(m); err != nil {
		return err
	}
	now := time.Now().UTC()
	name := now.Format("20060102T150405.000000000Z") + "-" + uuid.NewString()[:8] + ".eml"
	tmp := filepath.Join(o.Dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, render(o.From, m, now), 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(o.Dir, name)); err != nil {
		return err
	}
	o.Log.Info("mail written to outbox", "to", m.To, "subject", m.Subject, "file", name)
	return nil
}

// SMTP delivers through a relay; smtps:// uses implicit TLS, smtp:// STARTTLS when offered.
type SMTP struct {
	URL  *url.URL
	From string
}

// Send delivers one message.
func (s *SMTP) Send(ctx context.Context, m Message) error {
	if err := checkHeaders(m); err != nil {
		return err
	}
	host := s.URL.Hostname()
	port := s.URL.Port()
	if port == "" {
		port = "587"
		if s.URL.Scheme == "smtps" {
			port = "465"
		}
	}
	d := net.Dialer{Timeout: 15 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, port))
	if err != nil {
		return err
	}
	if s.URL.Scheme == "smtps" {
		conn = tls.Client(conn, &tls.Config{ServerName: host})
	}
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		conn.Close()
		return err
	}
	defer c.Close()
	if ok, _ := c.Extension("STARTTLS"); ok && s.URL.Scheme == "smtp" {
		if err := c.StartTLS(&tls.Config{ServerName: host}); err != nil {
			return err
		}
	}
	if s.URL.User != nil {
		pass, _ := s.URL.User.Password()
		if err := c.Auth(smtp.PlainAuth("", s.URL.User.Username(), pass, host)); err != nil {
			return err
		}
	}
	addr, err := parseAddr(s.From)
	if err != nil {
		return err
	}
	if err := c.Mail(addr); err != nil {
		return err
	}
	if err := c.Rcpt(m.To); err != nil {
		return err
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(render(s.From, m, time.Now().UTC())); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return c.Quit()
}

func parseAddr(from string) (string, error) {
	if i := strings.LastIndexByte(from, '<'); i >= 0 {
		return strings.TrimSuffix(from[i+1:], ">"), nil
	}
	return strings.TrimSpace(from), nil
}
