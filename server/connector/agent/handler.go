package agent

import (
	"context"
	"io"
	"time"

	"github.com/opsagent/opsagent/server/connector"
)

// Handler serves a connector's runs in place of the shell: the Kubernetes
// connector answers typed cluster calls with it and runs no command.
type Handler interface {
	// Describe completes the hello of each new session (kind, facts).
	Describe(ctx context.Context, h *connector.Hello)
	// Serve answers one run, writing its text to out.
	Serve(ctx context.Context, run connector.Run, out io.Writer) connector.Result
}

// serveWith answers a run through the handler and reports it like a command.
func (s *sess) serveWith(ctx context.Context, callID string, run connector.Run) {
	w := &frameWriter{ctx: ctx, s: s, callID: callID, max: run.MaxOutput}
	started := time.Now()
	res := s.cfg.Handler.Serve(ctx, run, w)
	took := time.Since(started)
	res.DurationMS, res.DurationUS, res.Truncated = took.Milliseconds(), took.Microseconds(), res.Truncated || w.truncated
	if err := s.send(context.Background(), &connector.Frame{Type: connector.TypeResult, CallID: callID, Result: &res}); err != nil {
		s.cfg.Logger.Warn("connector: result not delivered", "call_id", callID, "err", err)
	}
}

// frameWriter sends what a handler writes as output frames of ChunkSize.
type frameWriter struct {
	ctx       context.Context
	s         *sess
	callID    string
	max, sent int64
	truncated bool
}

func (w *frameWriter) Write(p []byte) (int, error) {
	n := len(p)
	if w.max > 0 && w.sent+int64(len(p)) > w.max {
		p = p[:max(w.max-w.sent, 0)]
		w.truncated = true
	}
	for len(p) > 0 {
		k := min(len(p), connector.ChunkSize)
		if err := w.s.send(w.ctx, &connector.Frame{Type: connector.TypeOutput, CallID: w.callID, Data: string(p[:k])}); err != nil {
			return 0, err
		}
		w.sent += int64(k)
		p = p[k:]
	}
	return n, nil
}
