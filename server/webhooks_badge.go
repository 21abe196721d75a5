package server

import (
	"context"
	"fmt"
	"html"
	"time"

	"github.com/opsagent/opsagent/store"
)

// handleWebhookBadge is GET /api/webhook-badges/{badge_token}: a small SVG
// for READMEs saying whether the webhook receives and dispatches. The token
// is 24 random bytes, unrelated to the secret; an unknown token is 404.
func (s *Server) handleWebhookBadge(c *Ctx) error {
	tok := c.Param("badge_token")
	if len(tok) < 16 || len(tok) > 64 {
		return errNotFoundRoute
	}
	h, err := s.db.FindWebhookByBadge(c.Context(), tok)
	if err != nil {
		return err
	}
	label, color := s.badgeStatus(c.Context(), h)
	c.W.Header().Set("Content-Type", "image/svg+xml; charset=utf-8")
	c.W.Header().Set("Cache-Control", "no-cache, max-age=60")
	c.W.WriteHeader(200)
	_, err = c.W.Write([]byte(badgeSVG("webhook", label, color)))
	return err
}

func (s *Server) badgeStatus(ctx context.Context, h *store.Webhook) (string, string) {
	if !h.Enabled || !h.TaskEnabled {
		return "disabled", "#9f9f9f"
	}
	e, err := s.db.LastWebhookEvent(ctx, h.TaskID)
	if err != nil {
		return "no events", "#9f9f9f"
	}
	age := s.Now().Sub(e.ReceivedAt).Round(time.Minute)
	switch e.Status {
	case store.EventFailed:
		return "failing", "#e05d44"
	default:
		return "ok " + humanAge(age) + " ago", "#4c1"
	}
}

func humanAge(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "<1m"
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// badgeSVG draws a two-part flat badge; widths estimate 6.5 px per character.
func badgeSVG(left, right, color string) string {
	lw, rw := 10+len(left)*7, 10+len(right)*7
	l, r := html.EscapeString(left), html.EscapeString(right)
	return fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="20" role="img" aria-label="%s: %s">`+
		`<rect width="%d" height="20" fill="#555"/><rect x="%d" width="%d" height="20" fill="%s"/>`+
		`<g fill="#fff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11" text-anchor="middle">`+
		`<text x="%d" y="14">%s</text><text x="%d" y="14">%s</text></g></svg>`,
		lw+rw, l, r, lw, lw, rw, color, lw/2, l, lw+rw/2, r)
}
