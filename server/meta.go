package server

import (
	"runtime"
	"time"

	"github.com/opsagent/opsagent/store"
)

// handleVersion is GET /api/version: 200 once the server is ready.
func (s *Server) handleVersion(c *Ctx) error {
	return c.JSON(200, VersionResponse{Version: Version, APIVersion: "0.1.0", GoVersion: runtime.Version(),
		StartedAt: s.started, UptimeSeconds: int64(time.Since(s.started) / time.Second), LLMConfigured: s.cfg.LLMProvider != ""})
}

// handleOpenAPI is GET /api/openapi.json, generated from the route table.
func (s *Server) handleOpenAPI(c *Ctx) error {
	c.W.Header().Set("Cache-Control", "no-cache")
	return c.JSON(200, s.openAPI())
}

func storeClientError(path, msg, stack, ua string) store.ClientError {
	return store.ClientError{Path: path, Message: msg, Stack: stack, UserAgent: ua}
}
