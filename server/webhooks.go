package server

import (
	"encoding/base64"
	"time"

	"github.com/opsagent/opsagent/server/auth"
	"github.com/opsagent/opsagent/server/webhook"
	"github.com/opsagent/opsagent/server/webhook/pipeline"
	"github.com/opsagent/opsagent/store"
)

// Webhook management: one webhook per task, addressed by the task
// (/api/tasks/{task_id}/webhook...). Records are documented here and in
// OpenAPI; the receiver lives in webhooks_receive.go and its engine in
// server/webhook/pipeline.

const (
	routingFirstMatch = "first_match"
	defaultOverlap    = 24 * time.Hour
)

// WebhookConfig is the body of PUT /api/tasks/{task_id}/webhook. Fields
// present are set; absent ones keep their value (or take the default on
// creation).
type WebhookConfig struct {
	Provider            *string  `json:"provider" validate:"nonnull,oneof=alertmanager grafana datadog sentry pagerduty github gitlab stripe generic" doc:"required on creation"`
	Scheme              *string  `json:"scheme" validate:"nonnull,oneof=bearer header_token hmac_sha256 github gitlab stripe pagerduty sentry none" doc:"verification scheme; default: the one the provider speaks (alertmanager and grafana: bearer, github: github, stripe: stripe, ...)"`
	Secret              *string  `json:"secret" validate:"nonnull,min=16,max=256" doc:"set your own secret; on creation a 32-byte random one is generated when absent. Returned once in the response"`
	Enabled             *bool    `json:"enabled" validate:"nonnull" doc:"default true; a disabled webhook answers 404 like an unknown one"`
	RoutingMode         *string  `json:"routing_mode" validate:"nonnull,oneof=first_match fan_out" doc:"first_match (default): the first matching rule runs; fan_out: every matching rule runs"`
	RateLimitPerMinute  *int     `json:"rate_limit_per_minute" validate:"nonnull,gte=1,lte=100000" doc:"sliding window per webhook; 429 with Retry-After above; default 600"`
	DedupeWindowSeconds *int     `json:"dedupe_window_seconds" validate:"nonnull,gte=0,lte=86400" doc:"identical payloads inside the window are stored once; 0 turns it off; default 60"`
	RetentionDays       *int     `json:"retention_days" validate:"nonnull,gte=7,lte=365" doc:"events older than this are deleted by the webhook-retention job; default 30"`
	MetadataOnly        *bool    `json:"metadata_only" validate:"nonnull" doc:"keep no body: it is dropped as soon as the event is dispatched (replay is then impossible)"`
	RedactGlobs         []string `json:"redact_globs" validate:"max=64" doc:"JSON path globs whose values are replaced by [REDACTED] before storage, e.g. alerts.*.annotations.token; validated on save"`
	Correlate           *bool    `json:"correlate" validate:"nonnull" doc:"join alerts of the same group or fingerprint into one open incident instead of one run each; default true for alertmanager and pagerduty"`
	CorrelationWindow   *int     `json:"correlation_window_seconds" validate:"nonnull,gte=60,lte=604800" doc:"an open incident attracts alerts for this long after its last one; default 3600"`
	ApprovalTTLSeconds  *int     `json:"approval_ttl_seconds" validate:"nonnull,gte=60,lte=2592000" doc:"how long an approval opened by a requires_approval rule waits before it expires; default 86400"`
}

// WebhookFailures counts verification failures since the server started.
type WebhookFailures struct {
	Count    int        `json:"count"`
	LastAt   *time.Time `json:"last_at"`
	LastCode string     `json:"last_code" doc:"signature_missing, signature_malformed, signature_mismatch, signature_stale, secret_missing"`
}

// WebhookOut is a task's webhook. Secret is present only in the answer
// that created or rotated it.
type WebhookOut struct {
	TaskID                   string          `json:"task_id"`
	ProjectID                string          `json:"project_id"`
	URL                      string          `json:"url" doc:"where the provider posts; absolute when the server has --base-url, else a path (see url_note)"`
	URLNote                  string          `json:"url_note,omitempty" doc:"present when url is a relative path because --base-url is not set"`
	BadgeURL                 string          `json:"badge_url" doc:"status badge (SVG); the token in it is the only credential, rotate by recreating the webhook"`
	Provider                 string          `json:"provider"`
	Scheme                   string          `json:"scheme"`
	Enabled                  bool            `json:"enabled"`
	RoutingMode              string          `json:"routing_mode"`
	RateLimitPerMinute       int             `json:"rate_limit_per_minute"`
	DedupeWindowSeconds      int             `json:"dedupe_window_seconds"`
	RetentionDays            int             `json:"retention_days"`
	MetadataOnly             bool            `json:"metadata_only"`
	RedactGlobs              []string        `json:"redact_globs"`
	Correlate                bool            `json:"correlate"`
	CorrelationWindowSeconds int             `json:"correlation_window_seconds"`
	ApprovalTTLSeconds       int             `json:"approval_ttl_seconds"`
	HasSecret                bool            `json:"has_secret"`
	Secret                   *string         `json:"secret,omitempty" doc:"shown once, when generated, given or rotated"`
	PreviousSecretValidUntil *time.Time      `json:"previous_secret_valid_until" doc:"during a rotation overlap the previous secret is accepted until then"`
	SecretRotatedAt          *time.Time      `json:"secret_rotated_at"`
	VerificationFailures     WebhookFailures `json:"verification_failures"`
	CreatedAt                time.Time       `json:"created_at"`
	UpdatedAt                time.Time       `json:"updated_at"`
}

// WebhookRotateRequest is the body of POST .../webhook/rotate-secret.
type WebhookRotateRequest struct {
	Secret         *string `json:"secret" validate:"nonnull,min=16,max=256" doc:"the new secret; generated when absent"`
	OverlapSeconds *int    `json:"overlap_seconds" validate:"nonnull,gte=0,lte=604800" doc:"how long the previous secret stays valid; default 86400, 0 revokes it at once"`
}

// WebhookTestOut answers POST .../webhook/test.
type WebhookTestOut struct {
	EventID  string `json:"event_id"`
	Status   string `json:"status"`
	Provider string `json:"provider"`
	Scheme   string `json:"scheme"`
	Type     string `json:"type" doc:"event type parsed from the sample"`
}

// webhookRoutes: the receiver, management, events, rules and badge.
func (s *Server) webhookRoutes() []*Route {
	tags := []string{"webhooks"}
	rd, wr := PermWebhooksRead, PermWebhooksWrite
	return []*Route{
		{Method: "POST", Path: "/api/webhooks/{task_id}", Summary: "Inbound webhook receiver (spec 4.7): verified by the webhook's own scheme; 202 once the redacted event is durably stored; 401 bad signature, 404 unknown or disabled, 413 larger than the server's webhook body limit (--webhook-max-body-bytes, x-max-body-bytes here), 422 not JSON (the generic provider stores it raw instead), 429 rate limited", Tags: tags, Auth: AuthNone, Resp: WebhookAck{}, Status: 202, MaxBody: s.cfg.WebhookMaxBodyBytes, RawBody: true, Handle: s.handleWebhookReceive},
		{Method: "GET", Path: "/api/webhook-badges/{badge_token}", Summary: "Status badge (SVG) of a webhook; the unguessable token is the credential", Tags: tags, Auth: AuthNone, Status: 200, Handle: s.handleWebhookBadge},
		{Method: "GET", Path: "/api/tasks/{task_id}/webhook", Summary: "Read a task's webhook (the secret is never shown again)", Tags: tags, Auth: AuthAny, Perm: rd, Project: true, Resp: WebhookOut{}, Status: 200, MCP: true, Handle: s.handleGetWebhook},
		{Method: "PUT", Path: "/api/tasks/{task_id}/webhook", Summary: "Create or configure a task's webhook (secret shown once)", Tags: tags, Auth: AuthAny, Perm: wr, Project: true, Body: WebhookConfig{}, Resp: WebhookOut{}, Status: 200, MaxBody: 64 << 10, Handle: s.handlePutWebhook},
		{Method: "DELETE", Path: "/api/tasks/{task_id}/webhook", Summary: "Remove a task's webhook, its rules and its events", Tags: tags, Auth: AuthAny, Perm: wr, Project: true, Status: 204, Handle: s.handleDeleteWebhook},
		{Method: "POST", Path: "/api/tasks/{task_id}/webhook/rotate-secret", Summary: "Rotate the secret; the previous one stays valid for the overlap", Tags: tags, Auth: AuthAny, Perm: wr, Project: true, Body: WebhookRotateRequest{}, Resp: WebhookOut{}, Status: 200, MaxBody: 16 << 10, Handle: s.handleRotateWebhook},
		{Method: "POST", Path: "/api/tasks/{task_id}/webhook/test", Summary: "Send a realistic sample of the provider, signed with the current secret, through the receiver's own pipeline (it is dispatched like a real event)", Tags: tags, Auth: AuthAny, Perm: wr, Project: true, Resp: WebhookTestOut{}, Status: 202, Handle: s.handleTestWebhook},
		{Method: "GET", Path: "/api/tasks/{task_id}/webhook/events", Summary: "List received events, newest first", Tags: tags, Auth: AuthAny, Perm: rd, Project: true, Query: WebhookEventQuery{}, Resp: WebhookEventPage{}, Status: 200, MCP: true, Handle: s.handleListWebhookEvents},
		{Method: "DELETE", Path: "/api/tasks/{task_id}/webhook/events", Summary: "Purge events (all, or received before a time)", Tags: tags, Auth: AuthAny, Perm: wr, Project: true, Query: WebhookPurgeQuery{}, Resp: WebhookPurgeOut{}, Status: 200, Handle: s.handlePurgeWebhookEvents},
		{Method: "POST", Path: "/api/tasks/{task_id}/webhook/events/replay", Summary: "Replay up to 50 events (each becomes a new event dispatched again)", Tags: tags, Auth: AuthAny, Perm: wr, Project: true, Body: WebhookReplayRequest{}, Resp: WebhookReplayOut{}, Status: 202, MaxBody: 64 << 10, Handle: s.handleReplayWebhookEvents},
		{Method: "GET", Path: "/api/tasks/{task_id}/webhook/events/{event_id}", Summary: "Read one event: redacted body, headers, verification and what it dispatched", Tags: tags, Auth: AuthAny, Perm: rd, Project: true, Resp: WebhookEventOut{}, Status: 200, MCP: true, Handle: s.handleGetWebhookEvent},
		{Method: "POST", Path: "/api/tasks/{task_id}/webhook/events/{event_id}/replay", Summary: "Replay one event", Tags: tags, Auth: AuthAny, Perm: wr, Project: true, Resp: WebhookReplayOut{}, Status: 202, Handle: s.handleReplayWebhookEvent},
		{Method: "GET", Path: "/api/tasks/{task_id}/webhook/rules", Summary: "List routing rules in evaluation order", Tags: tags, Auth: AuthAny, Perm: rd, Project: true, Resp: []WebhookRuleOut{}, Status: 200, MCP: true, Handle: s.handleListWebhookRules},
		{Method: "POST", Path: "/api/tasks/{task_id}/webhook/rules", Summary: "Create a routing rule (condition compiled on save: 422 when invalid or too costly)", Tags: tags, Auth: AuthAny, Perm: wr, Project: true, Body: WebhookRuleCreate{}, Resp: WebhookRuleOut{}, Status: 201, MaxBody: 16 << 10, Handle: s.handleCreateWebhookRule},
		{Method: "PATCH", Path: "/api/tasks/{task_id}/webhook/rules/{rule_id}", Summary: "Change a routing rule", Tags: tags, Auth: AuthAny, Perm: wr, Project: true, Body: WebhookRuleUpdate{}, Resp: WebhookRuleOut{}, Status: 200, MaxBody: 16 << 10, Handle: s.handleUpdateWebhookRule},
		{Method: "DELETE", Path: "/api/tasks/{task_id}/webhook/rules/{rule_id}", Summary: "Delete a routing rule", Tags: tags, Auth: AuthAny, Perm: wr, Project: true, Status: 204, Handle: s.handleDeleteWebhookRule},
	}
}

func (s *Server) webhookOut(h *store.Webhook, secret []byte) WebhookOut {
	o := WebhookOut{TaskID: h.TaskID, ProjectID: h.ProjectID, URL: trimSlash(s.cfg.BaseURL) + "/api/webhooks/" + h.TaskID,
		BadgeURL: trimSlash(s.cfg.BaseURL) + "/api/webhook-badges/" + h.BadgeToken, Provider: h.Provider, Scheme: h.Scheme,
		Enabled: h.Enabled, RoutingMode: h.RoutingMode, RateLimitPerMinute: h.RateLimit, DedupeWindowSeconds: h.DedupeSeconds,
		RetentionDays: h.RetentionDays, MetadataOnly: h.MetadataOnly, RedactGlobs: h.RedactGlobs, Correlate: h.Correlate,
		CorrelationWindowSeconds: h.CorrelationWindow, ApprovalTTLSeconds: h.ApprovalTTL, HasSecret: len(h.SecretCT) > 0,
		SecretRotatedAt: h.SecretRotatedAt, CreatedAt: h.CreatedAt, UpdatedAt: h.UpdatedAt}
	if s.cfg.BaseURL == "" {
		o.URLNote = "url is a path on this server because --base-url (OPSAGENT_BASE_URL) is not set: prefix it with the address senders reach this server at, or set --base-url to get an absolute URL"
	}
	if h.PrevValidUntil != nil && s.Now().Before(*h.PrevValidUntil) && len(h.PrevSecretCT) > 0 {
		o.PreviousSecretValidUntil = h.PrevValidUntil
	}
	if secret != nil {
		v := string(secret)
		o.Secret = &v
	}
	f := s.wh.Failures(h.TaskID)
	o.VerificationFailures = WebhookFailures{Count: f.Count, LastCode: f.Code}
	if f.Count > 0 {
		o.VerificationFailures.LastAt = &f.At
	}
	return o
}

// newWebhookSecret is 32 random bytes, URL-safe text (what senders paste).
func newWebhookSecret() []byte {
	return []byte("whsec_" + base64.RawURLEncoding.EncodeToString(auth.RandomBytes(32)))
}

// handleGetWebhook is GET /api/tasks/{task_id}/webhook.
func (s *Server) handleGetWebhook(c *Ctx) error {
	id, err := c.IDParam("task_id")
	if err != nil {
		return err
	}
	h, err := s.db.FindWebhook(c.Context(), c.OrgID(), c.ProjectID(), id)
	if err != nil {
		return err
	}
	return c.JSON(200, s.webhookOut(h, nil))
}

// handlePutWebhook is PUT /api/tasks/{task_id}/webhook.
func (s *Server) handlePutWebhook(c *Ctx) error {
	id, err := c.IDParam("task_id")
	if err != nil {
		return err
	}
	var req WebhookConfig
	if err := c.Bind(&req); err != nil {
		return err
	}
	h, err := s.db.FindWebhook(c.Context(), c.OrgID(), c.ProjectID(), id)
	creating := store.IsNotFound(err)
	if err != nil && !creating {
		return err
	}
	if creating {
		if _, err := s.db.FindTaskByID(c.Context(), c.OrgID(), c.ProjectID(), id); err != nil {
			return err
		}
		if req.Provider == nil {
			return invalid("Field required", "missing", "body", "provider")
		}
		p := webhook.Provider(*req.Provider)
		h = &store.Webhook{TaskID: id, OrgID: c.OrgID(), ProjectID: c.ProjectID(), Provider: string(p),
			Scheme: string(webhook.DefaultScheme(p)), Enabled: true, RoutingMode: routingFirstMatch, RateLimit: 600,
			DedupeSeconds: 60, RetentionDays: 30, RedactGlobs: []string{}, CorrelationWindow: 3600, ApprovalTTL: 86400,
			Correlate:  p == webhook.ProviderAlertmanager || p == webhook.ProviderPagerDuty,
			BadgeToken: auth.RandomToken(24), CreatedBy: c.ID.UserID}
	}
	if req.Provider != nil && !creating && *req.Provider != h.Provider {
		h.Provider = *req.Provider
		if req.Scheme == nil {
			h.Scheme = string(webhook.DefaultScheme(webhook.Provider(h.Provider)))
		}
	}
	if req.Scheme != nil {
		h.Scheme = *req.Scheme
	}
	setIf(&h.Enabled, req.Enabled)
	setIf(&h.RoutingMode, req.RoutingMode)
	setIf(&h.RateLimit, req.RateLimitPerMinute)
	setIf(&h.DedupeSeconds, req.DedupeWindowSeconds)
	setIf(&h.RetentionDays, req.RetentionDays)
	setIf(&h.MetadataOnly, req.MetadataOnly)
	setIf(&h.Correlate, req.Correlate)
	setIf(&h.CorrelationWindow, req.CorrelationWindow)
	setIf(&h.ApprovalTTL, req.ApprovalTTLSeconds)
	if req.RedactGlobs != nil {
		for i, g := range req.RedactGlobs {
			if err := webhook.ValidateGlob(g); err != nil {
				return invalid(err.Error(), "value_error.glob", "body", "redact_globs", i)
			}
		}
		h.RedactGlobs = req.RedactGlobs
	}
	var shown []byte
	switch {
	case req.Secret != nil:
		shown = []byte(*req.Secret)
	case creating && h.Scheme != string(webhook.SchemeNone):
		shown = newWebhookSecret()
	case !creating && len(h.SecretCT) == 0 && h.Scheme != string(webhook.SchemeNone):
		shown = newWebhookSecret() // switched from scheme none to one that needs a secret
	}
	var setSecret store.SetWebhookSecret
	if shown != nil {
		setSecret = func(w, _ *store.Webhook) error {
			ct, kid, err := s.secrets.Seal(pipeline.AAD(id), shown)
			if err != nil {
				return err
			}
			now := s.Now()
			w.SecretCT, w.SecretKeyID, w.SecretRotatedAt = ct, kid, &now
			return nil
		}
	}
	created, err := s.db.SaveWebhook(c.Context(), h, setSecret)
	if err != nil {
		return err
	}
	s.wh.Forget(id)
	action := "webhook.updated"
	if created {
		action = "webhook.created"
	}
	c.Audit(action, "success", "task", id, map[string]any{"provider": h.Provider, "scheme": h.Scheme, "secret_set": shown != nil})
	h, err = s.db.FindWebhook(c.Context(), c.OrgID(), c.ProjectID(), id)
	if err != nil {
		return err
	}
	return c.JSON(200, s.webhookOut(h, shown))
}

func setIf[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// handleDeleteWebhook is DELETE /api/tasks/{task_id}/webhook.
func (s *Server) handleDeleteWebhook(c *Ctx) error {
	id, err := c.IDParam("task_id")
	if err != nil {
		return err
	}
	if err := s.db.DeleteWebhook(c.Context(), c.OrgID(), c.ProjectID(), id); err != nil {
		return err
	}
	s.wh.Forget(id)
	c.Audit("webhook.deleted", "success", "task", id, nil)
	return c.NoContent()
}

// handleRotateWebhook is POST /api/tasks/{task_id}/webhook/rotate-secret.
// The current secret becomes the previous one, accepted until the overlap
// ends, so senders can be updated without dropping deliveries.
func (s *Server) handleRotateWebhook(c *Ctx) error {
	id, err := c.IDParam("task_id")
	if err != nil {
		return err
	}
	var req WebhookRotateRequest
	if err := c.Bind(&req); err != nil {
		return err
	}
	h, err := s.db.FindWebhook(c.Context(), c.OrgID(), c.ProjectID(), id)
	if err != nil {
		return err
	}
	secret := newWebhookSecret()
	if req.Secret != nil {
		secret = []byte(*req.Secret)
	}
	overlap := defaultOverlap
	if req.OverlapSeconds != nil {
		overlap = time.Duration(*req.OverlapSeconds) * time.Second
	}
	// The current secret becomes the previous one as stored inside the
	// transaction, never as read before it (a vault rotation may have
	// re-encrypted it meanwhile).
	rotate := func(w, old *store.Webhook) error {
		ct, kid, err := s.secrets.Seal(pipeline.AAD(id), secret)
		if err != nil {
			return err
		}
		now := s.Now()
		until := now.Add(overlap)
		w.PrevSecretCT, w.PrevSecretKeyID, w.PrevValidUntil = old.SecretCT, old.SecretKeyID, &until
		w.SecretCT, w.SecretKeyID, w.SecretRotatedAt = ct, kid, &now
		if overlap == 0 || len(w.PrevSecretCT) == 0 {
			w.PrevSecretCT, w.PrevSecretKeyID, w.PrevValidUntil = nil, "", nil
		}
		return nil
	}
	if _, err := s.db.SaveWebhook(c.Context(), h, rotate); err != nil {
		return err
	}
	s.wh.Forget(id)
	c.Audit("webhook.secret_rotated", "success", "task", id, map[string]any{"overlap_seconds": int(overlap.Seconds())})
	return c.JSON(200, s.webhookOut(h, secret))
}

// handleTestWebhook is POST /api/tasks/{task_id}/webhook/test.
func (s *Server) handleTestWebhook(c *Ctx) error {
	id, err := c.IDParam("task_id")
	if err != nil {
		return err
	}
	if _, err := s.db.FindWebhook(c.Context(), c.OrgID(), c.ProjectID(), id); err != nil {
		return err
	}
	st, err := s.wh.Lookup(c.Context(), id)
	if store.IsNotFound(err) {
		return &store.Error{Code: store.EConflict, Message: "the webhook or its task is disabled", Reason: "webhook_disabled"}
	}
	if err != nil {
		return err
	}
	p := webhook.Provider(st.Webhook.Provider)
	body := webhook.Sample(p)
	h := webhook.SampleHeaders(p)
	var secret []byte
	if len(st.Secrets) > 0 {
		secret = st.Secrets[0]
	}
	signDelivery(webhook.Scheme(st.Webhook.Scheme), secret, h, body, s.Now())
	ack, err := s.ingest(c.Context(), st, h, body, pipeline.Opts{Test: true})
	if err != nil {
		return err
	}
	ev, _ := webhook.Parse(p, h, body)
	c.Audit("webhook.tested", "success", "task", id, map[string]any{"event_id": ack.EventID})
	return c.JSON(202, WebhookTestOut{EventID: ack.EventID, Status: ack.Status, Provider: string(p), Scheme: st.Webhook.Scheme, Type: ev.Type})
}
