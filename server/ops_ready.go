package server

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Readiness: each check names one part a request may need. /readyz answers
// 503 when any fails, so a load balancer or orchestrator stops sending work
// (and an operator reads which part is wrong in the body).

// CheckOut is one readiness check's result.
type CheckOut struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// ReadyOut is the /readyz body.
type ReadyOut struct {
	Status string     `json:"status"` // ready or not_ready
	Checks []CheckOut `json:"checks"`
}

// HealthOut is the /healthz body.
type HealthOut struct {
	Status        string  `json:"status"`
	Version       string  `json:"version"`
	UptimeSeconds float64 `json:"uptime_seconds"`
}

// readyCacheFor bounds how often the checks run: /readyz is unauthenticated
// and its database check writes (and fsyncs), so a flood of probes costs at
// most one write per interval.
const readyCacheFor = time.Second

// notReadyCacheFor is the shorter life of a not-ready answer: after a
// restart the knowledge index loads in the background, and an orchestrator
// polling /readyz should hear it is ready within a tenth of a second of it,
// not up to a second later (still at most ten checks a second).
const notReadyCacheFor = 100 * time.Millisecond

// dbProbeWait is how long /readyz waits for the write probe; a probe still
// running after it (a lock held elsewhere, a stalled disk) reports failure
// and keeps running alone, so probes never pile up.
const dbProbeWait = 2 * time.Second

type readiness struct {
	mu       sync.Mutex
	at       time.Time
	last     ReadyOut
	probing  chan struct{} // closed when the running write probe ends; nil when none runs
	probeErr error
	probeAt  time.Time
}

func (s *Server) readyz(ctx context.Context) ReadyOut {
	s.ready.mu.Lock()
	defer s.ready.mu.Unlock()
	now := time.Now()
	life := readyCacheFor
	if s.ready.last.Status != "ready" {
		life = notReadyCacheFor
	}
	if !s.ready.at.IsZero() && now.Sub(s.ready.at) < life {
		return s.ready.last
	}
	checks := []CheckOut{s.checkDB(ctx), s.checkDisk(), s.checkRAG(), s.checkScheduler(now), s.checkVault()}
	out := ReadyOut{Status: "ready", Checks: checks}
	for _, c := range checks {
		if !c.OK {
			out.Status = "not_ready"
		}
	}
	s.ready.at, s.ready.last = time.Now(), out
	return out
}

// checkDB runs the write probe, or waits on the one still running.
func (s *Server) checkDB(ctx context.Context) CheckOut {
	c := CheckOut{Name: "database"}
	r := &s.ready
	if r.probing == nil {
		done := make(chan struct{})
		r.probing = done
		go func() {
			pctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err := s.db.ProbeWrite(pctx)
			cancel()
			s.ready.probeErr, s.ready.probeAt = err, time.Now()
			close(done)
		}()
	}
	select {
	case <-r.probing:
		r.probing = nil
		if r.probeErr != nil {
			c.Detail = "not writable: " + r.probeErr.Error()
			return c
		}
		c.OK, c.Detail = true, "writable"
	case <-time.After(dbProbeWait):
		c.Detail = fmt.Sprintf("not writable: a write did not complete within %s (locked by another process, or a stalled disk)", dbProbeWait)
	case <-ctx.Done():
		c.Detail = "not checked: the request ended"
	}
	return c
}

func (s *Server) checkDisk() CheckOut {
	c := CheckOut{Name: "disk"}
	free, err := DiskFree(s.cfg.DataDir)
	if err != nil {
		c.Detail = "free space unknown: " + err.Error()
		return c
	}
	c.OK = free >= uint64(s.cfg.DiskMinFree)
	c.Detail = fmt.Sprintf("%s free in the data directory, minimum %s", FormatBytes(free), FormatBytes(uint64(s.cfg.DiskMinFree)))
	return c
}

func (s *Server) checkRAG() CheckOut {
	c := CheckOut{Name: "rag_index"}
	if err := s.rag.Health(); err != nil {
		c.Detail = err.Error()
		return c
	}
	c.OK, c.Detail = true, "open"
	return c
}

func (s *Server) checkScheduler(now time.Time) CheckOut {
	c := CheckOut{Name: "scheduler"}
	ok, last, every := s.tasks.Ticking(now)
	c.OK = ok
	switch {
	case last.IsZero():
		c.Detail = "starting (no tick yet)"
	case ok:
		c.Detail = fmt.Sprintf("ticking every %s, last %s ago", every, now.Sub(last).Round(time.Millisecond))
	default:
		c.Detail = fmt.Sprintf("stalled: last tick %s ago, expected every %s", now.Sub(last).Round(time.Second), every)
	}
	return c
}

// checkVault seals and opens a small value: the keyring is loaded and the
// current key works (a rotation by another process is followed).
func (s *Server) checkVault() CheckOut {
	c := CheckOut{Name: "vault"}
	const aad = "opsagent:readyz"
	ct, _, err := s.secrets.Seal(aad, []byte("ok"))
	if err == nil {
		var pt []byte
		pt, err = s.secrets.Unseal(aad, ct)
		if err == nil && string(pt) != "ok" {
			err = fmt.Errorf("a sealed value did not open to itself")
		}
	}
	if err != nil {
		c.Detail = "locked or unusable: " + err.Error()
		return c
	}
	c.OK, c.Detail = true, "unlocked"
	return c
}

// FormatBytes prints a size in binary units, as df -h does.
func FormatBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
