package server

// The project's webhooks in one call: the console's webhooks page and
// dashboard read them here instead of asking each task for its webhook,
// which answered 404 for every task without one (issue 40 item 10).

// WebhookListQuery pages GET /api/webhooks.
type WebhookListQuery struct {
	Limit  int `query:"limit" default:"100" validate:"gte=1,lte=200"`
	Offset int `query:"offset" default:"0" validate:"gte=0"`
}

// WebhookPage is PaginatedResponse_WebhookOut_.
type WebhookPage struct {
	Items  []WebhookOut `json:"items"`
	Total  int          `json:"total"`
	Limit  int          `json:"limit"`
	Offset int          `json:"offset"`
}

func (WebhookPage) schemaName() string { return "PaginatedResponse_WebhookOut_" }

func (s *Server) webhookListRoutes() []*Route {
	return []*Route{
		{Method: "GET", Path: "/api/webhooks", Summary: "List the project's webhooks (one per task that has one; tasks without one are absent)", Tags: []string{"webhooks"}, Auth: AuthAny, Perm: PermWebhooksRead, Project: true, Query: WebhookListQuery{}, Resp: WebhookPage{}, Status: 200, Handle: s.handleListWebhooks},
	}
}

// handleListWebhooks is GET /api/webhooks.
func (s *Server) handleListWebhooks(c *Ctx) error {
	var q WebhookListQuery
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	hooks, total, err := s.db.FindWebhooks(c.Context(), c.OrgID(), c.ProjectID(), q.Limit, q.Offset)
	if err != nil {
		return err
	}
	page := WebhookPage{Items: make([]WebhookOut, 0, len(hooks)), Total: total, Limit: q.Limit, Offset: q.Offset}
	for i := range hooks {
		page.Items = append(page.Items, s.webhookOut(&hooks[i], nil))
	}
	return c.JSON(200, page)
}
