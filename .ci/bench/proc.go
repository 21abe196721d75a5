package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// proc is one running server (opsagent or the bare baseline).
type proc struct {
	name    string
	cmd     *exec.Cmd
	addr    string
	dataDir string
	log     string
	started time.Time
}

var listenRE = regexp.MustCompile(`opsagent listening.*?addr="?([0-9.:]+)`)

// startOpsagent runs `opsagent serve` on a free loopback port with the given
// data dir and flags and waits for its "opsagent listening" line.
func startOpsagent(bin, dataDir string, flags ...string) (*proc, error) {
	logf := dataDir + ".log"
	f, err := os.Create(logf)
	if err != nil {
		return nil, err
	}
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dataDir}, flags...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	p := &proc{name: filepath.Base(dataDir), cmd: cmd, dataDir: dataDir, log: logf, started: time.Now()}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	f.Close()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(logf)
		if m := listenRE.FindSubmatch(b); m != nil {
			p.addr = string(m[1])
			return p, nil
		}
		if cmd.ProcessState != nil {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	p.stop()
	b, _ := os.ReadFile(logf)
	return nil, fmt.Errorf("%s did not start: %s", bin, b)
}

// startBare runs the baseline server, which prints its address.
func startBare(bin string, args ...string) (*proc, error) {
	cmd := exec.Command(bin, append([]string{"127.0.0.1:0"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line := make([]byte, 64)
	n, err := out.Read(line)
	if err != nil {
		return nil, err
	}
	return &proc{name: "bare", cmd: cmd, addr: strings.TrimSpace(string(line[:n]))}, nil
}

func (p *proc) stop() {
	if p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-done
		}
	}
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// cpuSeconds is the process's user+system CPU time from /proc.
func (p *proc) cpuSeconds() float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.pid()))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	u, _ := strconv.ParseFloat(f[11], 64)
	k, _ := strconv.ParseFloat(f[12], 64)
	return (u + k) / 100 // CLK_TCK is 100 on Linux
}

// rssMB is VmRSS in MB (10^6 bytes, as the figures).
func (p *proc) rssMB() float64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid()))
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			kb, _ := strconv.ParseFloat(strings.Fields(l)[1], 64)
			return kb * 1024 / 1e6
		}
	}
	return 0
}

func (p *proc) url(path string) string { return "http://" + p.addr + path }

// client binds its connections to a loopback source address, so that
// per-address rate limits see distinct clients without any proxy setting.
func client(src string) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second}
	if src != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(src)}
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DialContext: d.DialContext, MaxIdleConnsPerHost: 4, DisableCompression: true,
	}}
}

// srcIP is the i-th distinct loopback source address (127.1.x.y).
func srcIP(i int) string { return fmt.Sprintf("127.1.%d.%d", i/250, i%250+1) }

// call does one JSON request; out may be nil. It returns the response for
// its cookies and status.
func call(c *http.Client, method, url, token, project string, body, out any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequestWithContext(context.Background(), method, url, rd)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if project != "" {
		req.Header.Set("X-Project-ID", project)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return resp, fmt.Errorf("%s %s: %d %s", method, url, resp.StatusCode, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return resp, fmt.Errorf("%s %s: %v", method, url, err)
		}
	}
	return resp, nil
}

func cookie(resp *http.Response, name string) string {
	for _, c := range resp.Cookies() {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// account is a registered user with its project.
type account struct {
	email, access, refresh, org, project string
}

const password = "a long passphrase for the benchmark"

// register creates an account from source address src; the first one also
// bootstraps an org and project named production.
func register(p *proc, src, email string, bootstrap bool) (*account, error) {
	c := client(src)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	resp, err := call(c, "POST", p.url("/api/auth/register"), "", "", map[string]string{"email": email, "password": password}, &tok)
	if err != nil {
		return nil, err
	}
	a := &account{email: email, access: tok.AccessToken, refresh: cookie(resp, "svc_refresh_token")}
	if !bootstrap {
		return a, nil
	}
	if _, err := call(c, "POST", p.url("/api/onboarding/bootstrap"), a.access, "", map[string]string{
		"org_name": "Bench", "project_name": "production", "task_template": "disk-pressure"}, nil); err != nil {
		return nil, err
	}
	var projects []struct {
		ID    string `json:"id"`
		Name  string `json:"name"`
		OrgID string `json:"org_id"`
	}
	if _, err := call(c, "GET", p.url("/api/projects"), a.access, "", nil, &projects); err != nil {
		return nil, err
	}
	for _, pr := range projects {
		if pr.Name == "production" {
			a.project, a.org = pr.ID, pr.OrgID
		}
	}
	return a, nil
}
