package server_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opsagent/opsagent/internal/testkit"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// The shipped reverse-proxy examples, run by the real nginx and Caddy with
// only the TLS and addresses swapped for loopback ones: a chat's events come
// through as they happen (the model answers two seconds after the session
// event), and the operations routes stay internal.
func TestReverseProxyExamplesStreamEvents(t *testing.T) {
	for _, proxy := range []string{"nginx", "caddy"} {
		t.Run(proxy, func(t *testing.T) {
			bin, err := exec.LookPath(proxy)
			if err != nil {
				t.Skipf("%s is not installed (apt-get install %s)", proxy, map[string]string{"nginx": "nginx-light", "caddy": "caddy"}[proxy])
			}
			fake := llmfake.New(t, llmfake.Text("Disk is fine.").After(2*time.Second))
			env := newEnv(t, withLLM(fake))
			upstream := strings.TrimPrefix(env.URL, "http://")
			base := startProxy(t, proxy, bin, upstream)
			if res, err := http.Get(base + "/metrics"); err != nil || res.StatusCode != 404 {
				t.Errorf("/metrics through %s: %v %v", proxy, res.StatusCode, err)
			}

			c := env.register(proxy + "@example.com")
			withProject(t, env, c)
			req, _ := http.NewRequest("POST", base+"/api/chat", strings.NewReader(`{"message":"disk?"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("Authorization", "Bearer "+c.Token)
			req.Header.Set("X-Project-ID", c.Project)
			start := time.Now()
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			sc := bufio.NewScanner(res.Body)
			var first, done time.Duration
			for sc.Scan() {
				line := sc.Text()
				if strings.HasPrefix(line, "event: session") && first == 0 {
					first = time.Since(start)
				}
				if strings.HasPrefix(line, "event: done") {
					done = time.Since(start)
					break
				}
			}
			if first == 0 || done == 0 {
				t.Fatalf("stream through %s: first %v done %v (status %d)", proxy, first, done, res.StatusCode)
			}
			// The model answers two seconds after the session event: through
			// a proxy that streams, the first event arrives that much before
			// done; one that buffers delivers both together at the end. (Not
			// "first within 1 s": a loaded machine can take that long to
			// start the chat.)
			if done < 2*time.Second || done-first < time.Second {
				t.Errorf("%s buffered the stream: first event after %v, done after %v", proxy, first, done)
			}
		})
	}
}

// startProxy runs the proxy on a free loopback port until it proxies
// /api/version, and returns its base URL. The port is picked free and
// then handed to the proxy, so another test can bind it in between: a
// proxy that exits (it could not bind) is started again on a new port,
// and an answer only counts while the proxy is still running (else it
// came from whoever took the port).
func startProxy(t *testing.T, proxy, bin, upstream string) string {
	t.Helper()
	for attempt := 1; ; attempt++ {
		listen := freeLoopbackAddr(t)
		dir := t.TempDir()
		var cmd *exec.Cmd
		if proxy == "nginx" {
			cmd = nginxCommand(t, bin, dir, listen, upstream)
		} else {
			cmd = caddyCommand(t, bin, dir, listen, upstream)
		}
		out := &testkit.SyncBuffer{}
		cmd.Stdout, cmd.Stderr = out, out
		cmd.WaitDelay = 5 * time.Second
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		// SIGTERM: nginx's master stops its workers too (a kill would
		// leave them holding the output pipe).
		t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); <-exited })
		base := "http://" + listen
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			answered := false
			if res, err := http.Get(base + "/api/version"); err == nil {
				res.Body.Close()
				answered = res.StatusCode == 200
			}
			if isClosed(exited) {
				if attempt == 3 {
					t.Fatalf("%s exited (3 attempts):\n%s", proxy, out)
				}
				t.Logf("%s on %s exited (its port taken?), trying another port:\n%s", proxy, listen, out)
				break
			}
			if answered {
				return base
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s did not proxy /api/version:\n%s", proxy, out)
			}
		}
	}
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// nginxCommand runs deploy/nginx/opsagent.conf with plain HTTP on listen.
func nginxCommand(t *testing.T, bin, dir, listen, upstream string) *exec.Cmd {
	raw, err := os.ReadFile("../deploy/nginx/opsagent.conf")
	if err != nil {
		t.Fatal(err)
	}
	var site []string
	for _, line := range strings.Split(string(raw), "\n") {
		trim := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trim, "ssl_certificate"), strings.HasPrefix(trim, "listen [::]"), trim == "http2 on;":
			continue
		case strings.HasPrefix(trim, "listen 443"):
			line = "\tlisten " + listen + ";"
		case trim == "server 127.0.0.1:8080;":
			line = "\tserver " + upstream + ";"
		}
		site = append(site, line)
	}
	if err := os.WriteFile(filepath.Join(dir, "opsagent.conf"), []byte(strings.Join(site, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;"
	}
	main := fmt.Sprintf(`%s
worker_processes 1;
pid %[2]s/nginx.pid;
error_log %[2]s/error.log warn;
events { worker_connections 64; }
http {
	access_log off;
	client_body_temp_path %[2]s/body;
	proxy_temp_path %[2]s/proxy;
	fastcgi_temp_path %[2]s/fastcgi;
	uwsgi_temp_path %[2]s/uwsgi;
	scgi_temp_path %[2]s/scgi;
	include %[2]s/opsagent.conf;
}
`, user, dir)
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "-t", "-p", dir, "-c", filepath.Join(dir, "nginx.conf")).CombinedOutput(); err != nil {
		t.Fatalf("nginx -t: %v\n%s", err, out)
	}
	return exec.CommandContext(context.Background(), bin, "-p", dir, "-c", filepath.Join(dir, "nginx.conf"), "-g", "daemon off;")
}

// caddyCommand runs deploy/caddy/Caddyfile with the site on plain HTTP.
func caddyCommand(t *testing.T, bin, dir, listen, upstream string) *exec.Cmd {
	raw, err := os.ReadFile("../deploy/caddy/Caddyfile")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(raw), "opsagent.example.com {", "http://"+listen+" {", 1)
	text = strings.Replace(text, "reverse_proxy 127.0.0.1:8080", "reverse_proxy "+upstream, 1)
	text = "{\n\tadmin off\n\tauto_https off\n}\n" + text
	path := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--config", path, "--adapter", "caddyfile")
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	return cmd
}
