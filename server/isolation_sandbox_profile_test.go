package server_test

// A project's sandbox profile is read and replaced through X-Project-ID:
// the other tenant's project answers 404, exactly like one that does not exist.
func init() {
	isolationProbes["GET /api/sandbox-profile"] = func(o own, x ids) []probeReq {
		return inProject(x, "GET", "/api/sandbox-profile", nil)
	}
	isolationProbes["PUT /api/sandbox-profile"] = func(o own, x ids) []probeReq {
		return inProject(x, "PUT", "/api/sandbox-profile", map[string]any{"allow_paths": []string{"/tmp"}})
	}
}
