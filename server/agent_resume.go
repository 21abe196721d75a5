package server

import "context"

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
