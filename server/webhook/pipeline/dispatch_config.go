package pipeline

import (
	"context"
	"time"

	"github.com/opsagent/opsagent/store"
)

// dispatchConfig is what the dispatcher plans an event of a webhook with:
// the webhook (nil once deleted) and its routing rules.
type dispatchConfig struct {
	hook  *store.Webhook
	rules []store.WebhookRule
	at    time.Time
}

// dispatchConfig returns a webhook's configuration for dispatch. Under
// load the dispatcher runs a short transaction every few milliseconds, and
// reading every webhook and its rules again for each was a twentieth of
// the CPU, so the configuration is kept for cacheTTL, dropped at once by
// Forget (the webhook and rule routes call it). On a PostgreSQL cluster
// another server may change the configuration, so there it is read afresh
// for every batch.
func (p *Pipeline) dispatchConfig(ctx context.Context, taskID string) (dispatchConfig, error) {
	now := time.Now()
	shared := p.d.DB.Shared()
	if !shared {
		p.mu.Lock()
		c, ok := p.configs[taskID]
		p.mu.Unlock()
		if ok && now.Sub(c.at) < cacheTTL && now.Sub(c.at) >= 0 {
			return c, nil
		}
	}
	c := dispatchConfig{at: now}
	h, err := p.d.DB.FindWebhookForIngest(ctx, taskID)
	if err != nil && !store.IsNotFound(err) {
		return c, err
	}
	if h != nil {
		if c.rules, err = p.d.DB.FindWebhookRules(ctx, h.OrgID, h.ProjectID, h.TaskID); err != nil {
			return c, err
		}
	}
	c.hook = h
	if !shared {
		p.mu.Lock()
		p.configs[taskID] = c
		p.mu.Unlock()
	}
	return c, nil
}
