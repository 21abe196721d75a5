package shellscan

import (
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"
)

// benchLine is a realistic 4 KB command line: pipelines, substitutions,
// wrappers, a nested bash -c and a here-document.
func benchLine() string {
	var b strings.Builder
	parts := []string{
		`sudo -u deploy env LANG=C timeout 30 kubectl get pods -n prod -o wide | grep -v Running | awk '{print $1}'`,
		`for p in $(kubectl get pods -n prod -o name); do kubectl logs "$p" --tail=20 | grep -i error || true; done`,
		`bash -c 'journalctl -u nginx --since "1 hour ago" | tail -n 50 && systemctl status nginx --no-pager'`,
		`find /var/log -name '*.gz' -mtime +7 -exec ls -l {} \; 2>/dev/null | sort -k5 -n | tail -5`,
		"cat <<'EOF' | sed -n '1,5p'\nline one\nline two\nEOF",
		`df -h / && free -m && uptime; echo "load: $(cut -d' ' -f1 /proc/loadavg)"`,
	}
	for b.Len() < 4096 {
		for _, p := range parts {
			b.WriteString(p)
			b.WriteString("\n")
		}
	}
	return b.String()[:4096]
}

// manifestLine is a 4 KB line of the common long kind: a manifest in a
// here-document applied with kubectl, then a rollout check.
func manifestLine() string {
	var b strings.Builder
	b.WriteString("cat <<'EOF' | kubectl apply -f -\n")
	for b.Len() < 4100 {
		b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-config\n  namespace: prod\ndata:\n  LOG_LEVEL: info\n")
	}
	tail := "\nEOF\nkubectl rollout status deploy/api -n prod --timeout=60s"
	return b.String()[:4096-len(tail)] + tail
}

func BenchmarkAnalyze4KB(b *testing.B) {
	line := benchLine()
	ro, _ := NewReadOnly(nil)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		a := Analyze(line)
		_ = DefaultCatalog.Effects(a)
		_, _ = ro.Proves(a)
	}
}

// TestAnalyzeLatencyP99 measures the analysis of a 4 KB line (parse,
// effects and read-only proof), wall clock and CPU time of the thread, and
// reports p50/p99; run with -v. It fails only on absurd numbers, as timing
// depends on the machine.
func TestAnalyzeLatencyP99(t *testing.T) {
	if testing.Short() {
		t.Skip("timing")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, line := range []string{benchLine(), manifestLine()} {
		latency(t, line)
	}
}

func latency(t *testing.T, line string) {
	ro, _ := NewReadOnly(nil)
	const n = 2000
	wall := make([]time.Duration, 0, n)
	cpu := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		c0, ok := threadCPU()
		start := time.Now()
		a := Analyze(line)
		_ = DefaultCatalog.Effects(a)
		_, _ = ro.Proves(a)
		wall = append(wall, time.Since(start))
		if c1, _ := threadCPU(); ok {
			cpu = append(cpu, c1-c0)
		}
	}
	pct := func(d []time.Duration, p int) time.Duration {
		if len(d) == 0 {
			return 0
		}
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return d[len(d)*p/100]
	}
	t.Logf("4 KB line, %d commands, %d runs: wall p50 %v p99 %v; thread CPU p50 %v p99 %v", len(Analyze(line).Commands), n,
		pct(wall, 50), pct(wall, 99), pct(cpu, 50), pct(cpu, 99))
	if pct(wall, 50) > 50*time.Millisecond {
		t.Fatalf("p50 %v", pct(wall, 50))
	}
}
