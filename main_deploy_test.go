package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The shipped systemd unit passes systemd-analyze verify (with ExecStart
// pointed at an executable that exists here: verify checks it).
func TestSystemdUnitVerifies(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("systemd-analyze is required in CI (.ci/run installs Debian's systemd package)")
		}
		t.Skip("systemd-analyze is not installed; the unit is verified where systemd exists")
	}
	unit, err := os.ReadFile("deploy/systemd/opsagent.service")
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(unit), "ExecStart=/usr/local/bin/opsagent", "ExecStart="+self, 1)
	for _, want := range []string{"NoNewPrivileges=yes", "ProtectSystem=strict", "DynamicUser=yes", "StateDirectory=opsagent", "CapabilityBoundingSet=\n", "SystemCallFilter=@system-service"} {
		if !strings.Contains(text, want) {
			t.Errorf("unit lacks %q", want)
		}
	}
	path := filepath.Join(t.TempDir(), "opsagent.service")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "" {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// The image builds where a Docker daemon runs, runs as non-root, and its
// binary answers.
func TestDockerImageBuilds(t *testing.T) {
	docker, err := exec.LookPath("docker")
	if err != nil {
		t.Skip("docker is not installed: the image build is checked where a Docker daemon exists")
	}
	if out, err := exec.Command(docker, "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		t.Skipf("no Docker daemon reachable (%v: %s): the image build is checked where one runs", err, strings.TrimSpace(string(out)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	tag := "opsagent-test:" + time.Now().Format("20060102150405")
	if out, err := exec.CommandContext(ctx, docker, "build", "-f", "deploy/Dockerfile", "-t", tag, ".").CombinedOutput(); err != nil {
		t.Fatalf("docker build: %v\n%s", err, out)
	}
	defer exec.Command(docker, "rmi", "-f", tag).Run()
	user, err := exec.CommandContext(ctx, docker, "image", "inspect", "--format", "{{.Config.User}} {{json .Config.Volumes}}", tag).Output()
	if err != nil || !strings.HasPrefix(string(user), "65532") || !strings.Contains(string(user), `"/data"`) {
		t.Errorf("image user/volumes = %q (%v)", user, err)
	}
	out, err := exec.CommandContext(ctx, docker, "run", "--rm", tag, "version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "opsagent") {
		t.Errorf("docker run version: %v %s", err, out)
	}
}
