package server

import (
	"context"
	"time"

	"github.com/opsagent/opsagent/server/agent/runner"
)

// resumeRuns resumes, once the server serves, the agent turns the last stop
// or crash cut (from their checkpoints), and the sessions whose approval was
// decided while no server could continue them. On a cluster the
// resume-runs job does the same for turns of servers that died.
func (s *Server) resumeRuns(ctx context.Context) {
	n, err := s.runner.ResumeInterrupted(ctx)
	if err != nil && ctx.Err() == nil {
		s.log.Error("agent: resuming interrupted turns", "err", err)
	}
	if n > 0 {
		s.log.Info("agent: interrupted turns resumed", "count", n)
	}
}

// relayResumed follows a resumed turn of a chat channel's session in its
// thread again: the relay that showed it ended with the server that ran it.
// The thread gets a new answer message from run.resumed on.
func (s *Server) relayResumed(info runner.RunInfo, firstSeq int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	thread, err := s.db.FindChannelThreadBySession(ctx, info.SessionID)
	if err != nil {
		return // not a channel's session
	}
	rt, err := s.channelRuntimeByID(ctx, thread.ChannelID)
	if err != nil {
		s.log.Warn("channels: resumed turn not relayed", "session_id", info.SessionID, "err", err)
		return
	}
	s.startRelay(rt, thread, firstSeq-1)
}
