-- Billing (issue 16): each org's plan and payment status, the per-month
-- counters of rate-like quotas, the metered usage per period, and what was
-- reported to Stripe. Plans themselves are configuration (built-in set plus
-- the operator's file), so only their ids are stored here.

-- One row per org once billing touched it; an org without a row is on the
-- default plan with status active.
CREATE TABLE billing_accounts (
	org_id TEXT PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
	plan_id TEXT NOT NULL,
	status TEXT NOT NULL DEFAULT 'active',  -- active, trialing, past_due, canceled
	past_due_since TEXT,                    -- start of the grace period; read-only after it
	pending_plan_id TEXT,                   -- a downgrade that does not fit the current use yet
	pending_reason TEXT NOT NULL DEFAULT '',
	stripe_customer_id TEXT UNIQUE,
	stripe_subscription_id TEXT,
	stripe_price_id TEXT,
	updated_at TEXT NOT NULL
);

-- Monthly counters of rate-like quotas (webhook events), bumped in the same
-- transaction as the thing they count so concurrent writers cannot overshoot.
CREATE TABLE billing_counters (
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	period TEXT NOT NULL,                   -- YYYY-MM (UTC)
	meter TEXT NOT NULL,
	n INTEGER NOT NULL,
	PRIMARY KEY (org_id, period, meter)
);

-- Metered usage per org, project ('' for org-wide) and period, recomputed
-- from the recorded data (sessions, webhook events, knowledge files): a
-- recompute replaces the period's rows in one transaction.
CREATE TABLE billing_usage (
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	period TEXT NOT NULL,
	project_id TEXT NOT NULL,
	meter TEXT NOT NULL,
	quantity REAL NOT NULL,
	computed_at TEXT NOT NULL,
	PRIMARY KEY (org_id, period, project_id, meter)
);

-- One row per metered period: the plan in force when it was last computed
-- (statements price the period with it) and whether the month had ended.
CREATE TABLE billing_periods (
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	period TEXT NOT NULL,
	plan_id TEXT NOT NULL,
	closed INTEGER NOT NULL DEFAULT 0,
	computed_at TEXT NOT NULL,
	PRIMARY KEY (org_id, period)
);

-- Stripe webhook events already applied (Stripe retries deliveries).
CREATE TABLE billing_stripe_events (
	id TEXT PRIMARY KEY,
	type TEXT NOT NULL,
	org_id TEXT,
	received_at TEXT NOT NULL
);

-- Usage reported to Stripe as meter events: the quantity already reported
-- per org, period and meter, so each report sends only the increase.
CREATE TABLE billing_stripe_reports (
	org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
	period TEXT NOT NULL,
	meter TEXT NOT NULL,
	reported REAL NOT NULL,
	reported_at TEXT NOT NULL,
	PRIMARY KEY (org_id, period, meter)
);
