package server_test

// Isolation probes of the investigator's routes (changes, evidence,
// findings), added to the sweep's isolationProbes.

func init() {
	for name, p := range investigatorProbes {
		isolationProbes[name] = p
	}
}

var investigatorProbes = map[string]probe{
	"GET /api/changes": func(o own, x ids) []probeReq { return inProject(x, "GET", "/api/changes", nil) },
	"POST /api/changes": func(o own, x ids) []probeReq {
		return inProject(x, "POST", "/api/changes", map[string]any{"title": "deploy"})
	},
	"GET /api/incidents/{incident_id}/findings": func(o own, x ids) []probeReq {
		return projectAndForeign(o, x, "GET", "/api/incidents/"+x.incident+"/findings", nil)
	},
	"GET /api/incidents/{incident_id}/evidence": func(o own, x ids) []probeReq {
		return projectAndForeign(o, x, "GET", "/api/incidents/"+x.incident+"/evidence", nil)
	},
	"POST /api/incidents/{incident_id}/investigate": func(o own, x ids) []probeReq {
		return projectAndForeign(o, x, "POST", "/api/incidents/"+x.incident+"/investigate", map[string]any{})
	},
	"POST /api/incidents/{incident_id}/findings/{finding_id}/next-steps/{index}/request-approval": func(o own, x ids) []probeReq {
		return projectAndForeign(o, x, "POST", "/api/incidents/"+x.incident+"/findings/"+x.rule+"/next-steps/0/request-approval", nil)
	},
	"GET /api/agent-settings": func(o own, x ids) []probeReq { return inProject(x, "GET", "/api/agent-settings", nil) },
	"PUT /api/agent-settings": func(o own, x ids) []probeReq {
		return inProject(x, "PUT", "/api/agent-settings", map[string]any{"instructions": "pwned"})
	},
}
