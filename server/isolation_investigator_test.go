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
}
