package cli_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// What a run's checkpoints cost on the built binary (issue 34: "a
// checkpoint is the transcript so far plus the step's state"): a task run
// of 40 steps whose command prints 20 KB each time, alternated with the same
// run printing 200 bytes (the baseline: the same checkpoints, a transcript
// that stays small). Off unless OPSAGENT_BENCH_CHECKPOINT=1; numbers in
// BENCHMARKS.md ("Checkpoint cost").
func TestCheckpointCostBench(t *testing.T) {
	if os.Getenv("OPSAGENT_BENCH_CHECKPOINT") == "" {
		t.Skip("set OPSAGENT_BENCH_CHECKPOINT=1 to measure")
	}
	const steps, rounds = 40, 3
	dir := t.TempDir()
	script := func(name string, size int) string {
		p := filepath.Join(dir, name)
		body := "#!/bin/sh\nhead -c " + strconv.Itoa(size) + " /dev/zero | tr '\\0' x\necho\n"
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	big, small := script("print-20k", 20000), script("print-200", 200)
	var turns []llmfake.Turn
	for i := 0; i < rounds*2; i++ {
		cmd := big
		if i%2 == 1 {
			cmd = small
		}
		for j := 0; j < steps; j++ {
			turns = append(turns, llmfake.ToolCall("run_command", `{"command":"`+cmd+`","target":"server"}`))
		}
		turns = append(turns, llmfake.Text("done"))
	}
	s := startServer(t, turns...)
	u := s.newUser("bench@example.com")
	allowCommands(s, u)
	task := s.must(201, "POST", "/api/tasks", u.token, u.project, map[string]any{"name": "bench", "prompt": "print",
		"max_steps": steps + 5, "timeout_seconds": 600})
	id := task["id"].(string)
	pid := s.proc.Cmd.Process.Pid
	for i := 0; i < rounds*2; i++ {
		label := "20 KB outputs"
		if i%2 == 1 {
			label = "200 B outputs (baseline)"
		}
		w0 := procWrites(t, pid)
		start := time.Now()
		out := s.must(202, "POST", "/api/tasks/"+id+"/trigger", u.token, u.project, nil)
		sid, _ := out["session_id"].(string)
		if sid == "" {
			t.Fatalf("trigger: %v", out)
		}
		sess := waitSession(t, s, u, sid, "completed")
		took := time.Since(start)
		w := procWrites(t, pid) - w0
		// Checkpoints per step: after the model call, before the
		// change-capable call starts, after its result; one at the start.
		cps := 3*steps + 1
		t.Logf("%-26s steps %v: %6.1f MB written (%5.1f KB per checkpoint, %d checkpoints), %5.2f s (%4.1f ms per checkpoint incl. its step)",
			label, sess["steps"], float64(w)/1e6, float64(w)/1e3/float64(cps), cps, took.Seconds(), took.Seconds()*1e3/float64(cps))
	}
}

// procWrites is how many bytes process pid has written (wchar: every
// write(2), the database's WAL and the log included).
func procWrites(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/io")
	if err != nil {
		t.Skipf("no /proc/PID/io: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "wchar: "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	t.Fatal("no wchar in /proc/PID/io")
	return 0
}
