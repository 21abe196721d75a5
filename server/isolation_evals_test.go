package server_test

// Evaluations belong to an org: the sweep tries a foreign id of another
// kind on their id routes (its ids have no evaluation), and
// TestEvalAPIRefusesBadScenariosAndOtherTenants tries the other org's real
// evaluation id.
func init() {
	isolationProbes["GET /api/evals/{eval_id}"] = func(o own, x ids) []probeReq { return one("GET", "/api/evals/"+x.rule, nil) }
	isolationProbes["GET /api/evals/{eval_id}/report.html"] = func(o own, x ids) []probeReq {
		return one("GET", "/api/evals/"+x.rule+"/report.html", nil)
	}
}

func init() {
	isolationProbes["GET /api/incidents/{incident_id}/eval-scenario"] = func(o own, x ids) []probeReq {
		return projectAndForeign(o, x, "GET", "/api/incidents/"+x.incident+"/eval-scenario", nil)
	}
}
