package server

// TaskTemplateOut is one entry of the built-in catalogue. POST /api/tasks
// with template_id copies it; any field of the body overrides the template.
type TaskTemplateOut struct {
	ID               string   `json:"id"`
	Name             string   `json:"name"`
	Description      string   `json:"description"`
	Category         string   `json:"category"`
	AgentType        string   `json:"agent_type"`
	Schedule         string   `json:"schedule"`
	MissedFirePolicy string   `json:"missed_fire_policy"`
	OverlapPolicy    string   `json:"overlap_policy"`
	TimeoutSeconds   int      `json:"timeout_seconds"`
	MaxSteps         int      `json:"max_steps"`
	Prompt           string   `json:"prompt"`
	Tags             []string `json:"tags"`
}

// taskTemplates is the catalogue: common SRE chores with prompts that ask
// for evidence and a verdict, and schedules that match how often each
// condition changes. Schedules are read in the task's zone (UTC by default).
var taskTemplates = withTemplateDefaults([]TaskTemplateOut{
	{ID: "disk-pressure", Name: "Disk pressure check", Category: "capacity", AgentType: "sre", Schedule: "*/30 * * * *",
		Description: "Find filesystems and volumes running out of space or inodes before they fill.",
		Prompt: "Check disk usage on every host and volume you can reach (df -h and df -i, or the metrics source). " +
			"Report each filesystem above 80% space or 80% inodes, its growth over the last 24 hours if known, " +
			"and the largest directories or files responsible. Estimate time to full. Do not delete anything; " +
			"propose safe clean-ups (rotated logs, old images, caches) for a human to approve.",
		Tags: []string{"disk", "capacity"}},
	{ID: "memory-pressure", Name: "Memory pressure and OOM kills", Category: "capacity", AgentType: "sre", Schedule: "0 * * * *",
		Description: "Spot hosts and containers near their memory limit and recent OOM kills.",
		Prompt: "Review memory usage across hosts and containers. List anything above 90% of its limit, swap in heavy use, " +
			"and every OOM kill in the last hour (kernel log, container events) with the process or pod it hit. " +
			"Say whether it looks like a leak (steady growth) or a spike, and what limit or request change you would suggest.",
		Tags: []string{"memory", "oom"}},
	{ID: "tls-expiry", Name: "TLS certificate expiry", Category: "security", AgentType: "security", Schedule: "0 8 * * *",
		Description: "Warn before any served certificate expires.",
		Prompt: "Check the TLS certificates served by our public and internal endpoints. For each, report the subject, " +
			"issuer, expiry date and days left. Flag anything expiring within 21 days as a warning and within 7 days as critical, " +
			"and any chain, hostname or weak-key problem. Say whether renewal looks automated (ACME) and whether it last succeeded.",
		Tags: []string{"tls", "certificates"}},
	{ID: "failed-systemd-units", Name: "Failed systemd units", Category: "health", AgentType: "sre", Schedule: "*/15 * * * *",
		Description: "List services that have failed or keep restarting.",
		Prompt: "On each host, list systemd units in the failed state (systemctl --failed) and units that restarted more than 3 times " +
			"in the last hour. For each, show the last 20 journal lines and your reading of the cause. Do not restart anything.",
		Tags: []string{"systemd", "services"}},
	{ID: "backup-freshness", Name: "Backup freshness", Category: "data", AgentType: "database", Schedule: "0 7 * * *",
		Description: "Verify every backup ran recently and is restorable.",
		Prompt: "For every database and volume with a backup policy, find the most recent successful backup, its age and size, " +
			"and compare with the policy (expected at least daily). Flag missing, failed, stale (older than 26 hours) or suspiciously " +
			"small backups. Note when a restore was last tested.",
		Tags: []string{"backup", "database"}},
	{ID: "k8s-pods-not-ready", Name: "Kubernetes pods not ready", Category: "health", AgentType: "kubernetes", Schedule: "*/10 * * * *",
		Description: "Find pods that are not ready, crash-looping or stuck pending.",
		Prompt: "List pods in every namespace that are not Ready, in CrashLoopBackOff, ImagePullBackOff or Pending for more than " +
			"5 minutes. For each, give the owner (deployment, statefulset, job), restart count, the last events and the last log lines, " +
			"and the likely cause (probe, image, scheduling, resources, config). Group by namespace.",
		Tags: []string{"kubernetes", "pods"}},
	{ID: "error-rate-spike", Name: "Error-rate spike review", Category: "reliability", AgentType: "sre", Schedule: "*/30 * * * *",
		Description: "Compare error rates with the previous day and explain spikes.",
		Prompt: "Compare the 5xx and error-log rates of each service over the last 30 minutes with the same window yesterday. " +
			"Report services whose error rate doubled or exceeds 1% of requests, the top error messages or endpoints, and any deploy, " +
			"config change or dependency incident that lines up in time.",
		OverlapPolicy: "skip", Tags: []string{"errors", "slo"}},
	{ID: "weekly-cost-summary", Name: "Weekly cost summary", Category: "cost", AgentType: "cost", Schedule: "0 9 * * 1",
		Description: "Summarise last week's cloud spend and the biggest savings.",
		Prompt: "Summarise cloud spend for the last 7 days by account, service and team tag, with the change from the week before. " +
			"List the five largest increases with their cause, and the top savings opportunities (idle instances, unattached volumes, " +
			"oversized databases, old snapshots) with an estimated monthly saving each.",
		Tags: []string{"cost", "finops"}},
	{ID: "node-resource-saturation", Name: "Kubernetes node saturation", Category: "capacity", AgentType: "kubernetes", Schedule: "0 */2 * * *",
		Description: "Nodes near CPU, memory or pod limits, and pending pods that cannot schedule.",
		Prompt: "For each node, report requested and used CPU and memory against allocatable, pod count against the limit, and " +
			"conditions (MemoryPressure, DiskPressure, PIDPressure). List pods pending for lack of resources and say whether the cluster " +
			"needs scaling or whether requests are oversized.",
		Tags: []string{"kubernetes", "capacity"}},
	{ID: "security-updates", Name: "Pending security updates", Category: "security", AgentType: "security", Schedule: "0 6 * * 1",
		Description: "Hosts with outstanding security patches or a pending reboot.",
		Prompt: "List hosts with pending security updates (apt, dnf or the patch tool in use), the packages and CVE severities involved, " +
			"and hosts waiting for a reboot to load a patched kernel. Prioritise internet-facing hosts.",
		Tags: []string{"patching", "cve"}},
	{ID: "slow-queries", Name: "Slow database queries", Category: "data", AgentType: "database", Schedule: "0 */6 * * *",
		Description: "The slowest and most frequent expensive queries and their trend.",
		Prompt: "From the slow-query log or statistics views (pg_stat_statements, performance_schema), report the ten queries with the " +
			"highest total time over the last 6 hours, their mean latency and call count, and any that got slower. Suggest indexes or " +
			"rewrites, and note replication lag and connection saturation if present.",
		Tags: []string{"database", "performance"}},
})

// withTemplateDefaults fills the settings most templates share.
func withTemplateDefaults(ts []TaskTemplateOut) []TaskTemplateOut {
	for i := range ts {
		t := &ts[i]
		if t.MissedFirePolicy == "" {
			t.MissedFirePolicy = "run_once"
		}
		if t.OverlapPolicy == "" {
			t.OverlapPolicy = "skip"
		}
		if t.TimeoutSeconds == 0 {
			t.TimeoutSeconds = defaultTaskTimeout
		}
		if t.MaxSteps == 0 {
			t.MaxSteps = defaultTaskMaxSteps
		}
	}
	return ts
}

func findTemplate(id string) (TaskTemplateOut, bool) {
	for _, t := range taskTemplates {
		if t.ID == id {
			return t, true
		}
	}
	return TaskTemplateOut{}, false
}

// handleTaskTemplates is GET /api/task-templates.
func (s *Server) handleTaskTemplates(c *Ctx) error {
	return c.JSON(200, taskTemplates)
}
