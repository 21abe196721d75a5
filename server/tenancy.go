package server

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
)

// installTenancy wraps every state-changing route so that it leaves an
// audit event (auditUnsafe).
func (s *Server) installTenancy() {
	for _, rt := range s.routes {
		rt.Handle = s.auditUnsafe(rt, rt.Handle)
	}
}

type auditMarkKey struct{}

// auditUnsafe wraps a handler so that every successful state-changing request
// of an authenticated caller leaves an audit event: the handler's own specific
// event when it wrote one, else a generic one named after the route.
func (s *Server) auditUnsafe(rt *Route, h func(*Ctx) error) func(*Ctx) error {
	if rt.Method == http.MethodGet || rt.Method == http.MethodHead || rt.Method == http.MethodOptions {
		return h
	}
	return func(c *Ctx) error {
		mark := auditMark(c)
		err := h(c)
		if err != nil || c.ID == nil || mark.Load() {
			return err
		}
		status := 0
		if rec, ok := c.W.(*statusRecorder); ok {
			status = rec.status
		}
		if status >= 200 && status < 300 {
			targetType, targetID := "", ""
			for _, seg := range strings.Split(rt.Path, "/") {
				if isParam(seg) {
					name := seg[1 : len(seg)-1]
					targetType, targetID = humanName(name), c.Param(name)
				}
			}
			c.Audit("request."+strings.ToLower(rt.Method)+" "+rt.Path, "success", targetType, targetID, nil)
		}
		return nil
	}
}

// auditMark is the request's mark, cleared: what counts is what the
// handler audits. wrap's request state holds it; a request without one (no
// caller today) gets its own in the context.
func auditMark(c *Ctx) *atomic.Bool {
	if st := stateFrom(c.Context()); st != nil {
		st.audited.Store(false)
		return &st.audited
	}
	mark := new(atomic.Bool)
	c.R = c.R.WithContext(context.WithValue(c.Context(), auditMarkKey{}, mark))
	return mark
}

// markAudited notes that the request wrote its own specific audit event.
func markAudited(ctx context.Context) {
	if m, ok := ctx.Value(auditMarkKey{}).(*atomic.Bool); ok {
		m.Store(true)
		return
	}
	if st := stateFrom(ctx); st != nil {
		st.audited.Store(true)
	}
}
