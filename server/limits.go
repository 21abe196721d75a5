package server

// Rate limits of expensive or guessable operations (429 with Retry-After).
// They are checked before the work they guard: before a session is
// created or a model called, before a directory is scanned, before an
// API key is looked up or hashed.
const (
	// DefaultAgentTurnsPerMinute bounds POST /api/chat and session resumes
	// together, per caller (a person, or an API key on its own);
	// --agent-turns-per-minute changes it.
	DefaultAgentTurnsPerMinute = 20
	// KnowledgeSyncsPerMinute bounds POST /api/knowledge/sync per organization.
	KnowledgeSyncsPerMinute = 6
	// APIKeyMissesPer5Min bounds API keys that match no key (unknown prefix or
	// wrong secret) per client address.
	APIKeyMissesPer5Min = 20
)

// allowAgentTurn spends one of the caller's agent turns.
func (s *Server) allowAgentTurn(c *Ctx) error {
	key := "user:" + c.ID.UserID
	if c.ID.KeyID != "" {
		key = "key:" + c.ID.KeyID
	}
	if ok, retry := s.limits.agentTurns.Allow(key); !ok {
		return &RateLimitError{RetryAfter: retry}
	}
	return nil
}
