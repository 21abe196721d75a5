package mail

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"mime"
	"net"
	netmail "net/mail"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOutboxWritesRFC5322Files(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "outbox")
	s, err := New("", "opsagent <noreply@test>", dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(context.Background(), Message{To: "ada@example.com", Subject: "Réinitialiser", Body: "line one\nToken: abc\n"}); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || !strings.HasSuffix(entries[0].Name(), ".eml") {
		t.Fatalf("outbox: %v", entries)
	}
	st, _ := os.Stat(filepath.Join(dir, entries[0].Name()))
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mail file mode %o: it holds tokens", st.Mode().Perm())
	}
	f, _ := os.Open(filepath.Join(dir, entries[0].Name()))
	defer f.Close()
	msg, err := netmail.ReadMessage(f)
	if err != nil {
		t.Fatal(err)
	}
	subj, _ := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	body, _ := io.ReadAll(msg.Body)
	if msg.Header.Get("To") != "ada@example.com" || subj != "Réinitialiser" || !strings.Contains(string(body), "Token: abc\r\n") {
		t.Fatalf("message: to %q subject %q body %q", msg.Header.Get("To"), subj, body)
	}
	if err := s.Send(context.Background(), Message{To: "a@example.com\r\nBcc: x@evil.example", Subject: "x"}); err == nil {
		t.Fatal("a recipient with a line break was accepted")
	}
}

// fakeSMTP is a loopback server speaking enough SMTP (RFC 5321) for net/smtp.
func fakeSMTP(t *testing.T) (addr string, got chan string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	got = make(chan string, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		r := bufio.NewReader(conn)
		say := func(s string) { io.WriteString(conn, s+"\r\n") }
		say("220 fake ESMTP")
		var transcript strings.Builder
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			cmd := strings.ToUpper(strings.TrimSpace(line))
			transcript.WriteString(strings.TrimSpace(line) + "\n")
			switch {
			case strings.HasPrefix(cmd, "EHLO"):
				say("250-fake")
				say("250 AUTH PLAIN")
			case strings.HasPrefix(cmd, "AUTH PLAIN"):
				say("235 ok")
			case strings.HasPrefix(cmd, "MAIL FROM"), strings.HasPrefix(cmd, "RCPT TO"):
				say("250 ok")
			case cmd == "DATA":
				say("354 go on")
				for {
					l, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if l == ".\r\n" {
						break
					}
					transcript.WriteString(l)
				}
				say("250 queued")
			case cmd == "QUIT":
				say("221 bye")
				got <- transcript.String()
				return
			default:
				say("500 what")
			}
		}
	}()
	return ln.Addr().String(), got
}

func TestSMTPDeliversOverTheWire(t *testing.T) {
	addr, got := fakeSMTP(t)
	u, _ := url.Parse("smtp://" + addr)
	s, err := New(u.String(), "opsagent <noreply@test>", "", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(context.Background(), Message{To: "ada@example.com", Subject: "Hello", Body: "Token: xyz\n"}); err != nil {
		t.Fatal(err)
	}
	tr := <-got
	for _, want := range []string{"MAIL FROM:<noreply@test>", "RCPT TO:<ada@example.com>", "Subject: Hello", "Token: xyz"} {
		if !strings.Contains(tr, want) {
			t.Fatalf("transcript lacks %q:\n%s", want, tr)
		}
	}
}
