package main

import (
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"time"
)

// wrkResult is what one wrk run printed, plus the server's CPU per request.
type wrkResult struct {
	rps      float64
	p99      time.Duration
	requests float64
	non2xx   float64
	cpuUS    float64 // server CPU µs per request (from /proc)
}

func (r wrkResult) String() string {
	s := fmt.Sprintf("%.0f/s p99 %s", r.rps, fmtDur(r.p99))
	if r.cpuUS > 0 {
		s += fmt.Sprintf(" %.0fµs CPU/req", r.cpuUS)
	}
	if r.non2xx > 0 {
		s += fmt.Sprintf(" non-2xx %.0f", r.non2xx)
	}
	return s
}

func fmtDur(d time.Duration) string {
	if d >= time.Millisecond {
		return fmt.Sprintf("%.1fms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.0fµs", float64(d)/1e3)
}

var (
	rpsRE  = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	p99RE  = regexp.MustCompile(`\n\s+99%\s+([0-9.]+)(us|ms|s)`)
	nRE    = regexp.MustCompile(`\n\s+([0-9]+) requests in`)
	non2RE = regexp.MustCompile(`Non-2xx or 3xx responses:\s+([0-9]+)`)
)

// runWrk runs wrk against url for secs with conns connections; p (may be
// nil) is the server whose CPU time is read around the run.
func runWrk(p *proc, url string, conns, secs int, extra ...string) (wrkResult, error) {
	// extra holds wrk's options, then optionally "--" and the script's
	// arguments, which wrk takes after the URL.
	var scriptArgs []string
	for i, a := range extra {
		if a == "--" {
			extra, scriptArgs = extra[:i], extra[i:]
			break
		}
	}
	args := append([]string{"-t2", fmt.Sprintf("-c%d", conns), fmt.Sprintf("-d%ds", secs), "--latency"}, extra...)
	args = append(append(args, url), scriptArgs...)
	var c0 float64
	if p != nil {
		c0 = p.cpuSeconds()
	}
	out, err := exec.Command("wrk", args...).CombinedOutput()
	if err != nil {
		return wrkResult{}, fmt.Errorf("wrk: %v: %s", err, out)
	}
	s := string(out)
	var r wrkResult
	if m := rpsRE.FindStringSubmatch(s); m != nil {
		r.rps, _ = strconv.ParseFloat(m[1], 64)
	}
	if m := p99RE.FindStringSubmatch(s); m != nil {
		v, _ := strconv.ParseFloat(m[1], 64)
		unit := map[string]float64{"us": 1e3, "ms": 1e6, "s": 1e9}[m[2]]
		r.p99 = time.Duration(v * unit)
	}
	if m := nRE.FindStringSubmatch(s); m != nil {
		r.requests, _ = strconv.ParseFloat(m[1], 64)
	}
	if m := non2RE.FindStringSubmatch(s); m != nil {
		r.non2xx, _ = strconv.ParseFloat(m[1], 64)
	}
	if p != nil && r.requests > 0 {
		r.cpuUS = (p.cpuSeconds() - c0) * 1e6 / r.requests
	}
	return r, nil
}
