package server_test

// orgProbes: sign-in sessions, users, organizations, members, invitations,
// projects, API keys, audit and MFA.
var orgProbes = map[string]probe{
	"DELETE /api/auth/sessions/{session_id}": func(o own, x ids) []probeReq { return one("DELETE", "/api/auth/sessions/"+x.session, nil) },
	"GET /api/users/{user_id}/avatar":        func(o own, x ids) []probeReq { return one("GET", "/api/users/"+x.user+"/avatar", nil) },
	"POST /api/auth/switch-org/{org_id}":     func(o own, x ids) []probeReq { return one("POST", "/api/auth/switch-org/"+x.org, nil) },
	"GET /api/organizations/{org_id}":        func(o own, x ids) []probeReq { return one("GET", "/api/organizations/"+x.org, nil) },
	"PATCH /api/organizations/{org_id}": func(o own, x ids) []probeReq {
		return one("PATCH", "/api/organizations/"+x.org, map[string]any{"name": "pwned"})
	},
	"PATCH /api/organizations/{org_id}/branding": func(o own, x ids) []probeReq {
		return one("PATCH", "/api/organizations/"+x.org+"/branding", map[string]any{"display_name": "pwned"})
	},
	"DELETE /api/organizations/{org_id}/llm-key": func(o own, x ids) []probeReq { return one("DELETE", "/api/organizations/"+x.org+"/llm-key", nil) },
	"GET /api/organizations/{org_id}/members":    func(o own, x ids) []probeReq { return one("GET", "/api/organizations/"+x.org+"/members", nil) },
	"PATCH /api/organizations/{org_id}/members/{user_id}": func(o own, x ids) []probeReq {
		b := map[string]any{"role": "viewer"}
		return []probeReq{{method: "PATCH", path: "/api/organizations/" + x.org + "/members/" + x.user, body: b},
			{method: "PATCH", path: "/api/organizations/" + o.org + "/members/" + x.user, body: b}}
	},
	"DELETE /api/organizations/{org_id}/members/{user_id}": func(o own, x ids) []probeReq {
		return []probeReq{{method: "DELETE", path: "/api/organizations/" + x.org + "/members/" + x.user},
			{method: "DELETE", path: "/api/organizations/" + o.org + "/members/" + x.user}}
	},
	"POST /api/organizations/{org_id}/leave": func(o own, x ids) []probeReq { return one("POST", "/api/organizations/"+x.org+"/leave", nil) },
	"POST /api/organizations/{org_id}/invitations": func(o own, x ids) []probeReq {
		return one("POST", "/api/organizations/"+x.org+"/invitations", map[string]any{"email": "mole@example.com", "role": "owner"})
	},
	"GET /api/organizations/{org_id}/invitations": func(o own, x ids) []probeReq { return one("GET", "/api/organizations/"+x.org+"/invitations", nil) },
	"GET /api/organizations/{org_id}/retention":   func(o own, x ids) []probeReq { return one("GET", "/api/organizations/"+x.org+"/retention", nil) },
	"PUT /api/organizations/{org_id}/retention": func(o own, x ids) []probeReq {
		return one("PUT", "/api/organizations/"+x.org+"/retention", map[string]any{"audit_days": 1})
	},
	"DELETE /api/organizations/{org_id}/invitations/{invitation_id}": func(o own, x ids) []probeReq {
		return []probeReq{{method: "DELETE", path: "/api/organizations/" + x.org + "/invitations/" + x.invitation},
			{method: "DELETE", path: "/api/organizations/" + o.org + "/invitations/" + x.invitation}}
	},
	"GET /api/projects/current": func(o own, x ids) []probeReq {
		return []probeReq{{method: "GET", path: "/api/projects/current", project: x.project}}
	},
	"GET /api/projects/{project_id}": func(o own, x ids) []probeReq { return one("GET", "/api/projects/"+x.project, nil) },
	"PATCH /api/projects/{project_id}": func(o own, x ids) []probeReq {
		return one("PATCH", "/api/projects/"+x.project, map[string]any{"name": "pwned"})
	},
	"DELETE /api/projects/{project_id}":            func(o own, x ids) []probeReq { return one("DELETE", "/api/projects/"+x.project, nil) },
	"GET /api/projects/{project_id}/feature-flags": func(o own, x ids) []probeReq { return one("GET", "/api/projects/"+x.project+"/feature-flags", nil) },
	"GET /api/projects/{project_id}/members":       func(o own, x ids) []probeReq { return one("GET", "/api/projects/"+x.project+"/members", nil) },
	"POST /api/projects/{project_id}/members": func(o own, x ids) []probeReq {
		return []probeReq{{method: "POST", path: "/api/projects/" + x.project + "/members", body: map[string]any{"user_id": x.user, "role": "viewer"}},
			{method: "POST", path: "/api/projects/" + o.project + "/members", body: map[string]any{"user_id": x.user, "role": "viewer"}}}
	},
	"PATCH /api/projects/{project_id}/members/{user_id}": func(o own, x ids) []probeReq {
		b := map[string]any{"role": "viewer"}
		return []probeReq{{method: "PATCH", path: "/api/projects/" + x.project + "/members/" + x.user, body: b},
			{method: "PATCH", path: "/api/projects/" + o.project + "/members/" + x.user, body: b}}
	},
	"DELETE /api/projects/{project_id}/members/{user_id}": func(o own, x ids) []probeReq {
		return []probeReq{{method: "DELETE", path: "/api/projects/" + x.project + "/members/" + x.user},
			{method: "DELETE", path: "/api/projects/" + o.project + "/members/" + x.user}}
	},
	"POST /api/api-keys": func(o own, x ids) []probeReq {
		return one("POST", "/api/api-keys", map[string]any{"name": "mole", "scopes": []string{"*"}, "projects": []string{x.project}})
	},
	"DELETE /api/api-keys/{key_id}": func(o own, x ids) []probeReq { return one("DELETE", "/api/api-keys/"+x.key, nil) },
	"GET /api/audit-logs": func(o own, x ids) []probeReq {
		return []probeReq{{method: "GET", path: "/api/audit-logs?target_id=" + x.project}, {method: "GET", path: "/api/audit-logs?actor=" + x.user}}
	},
	"GET /api/audit-logs/export": func(o own, x ids) []probeReq {
		return []probeReq{{method: "GET", path: "/api/audit-logs/export?format=jsonl&target_id=" + x.org}, {method: "GET", path: "/api/audit-logs/export?format=csv&actor=" + x.user}}
	},
	"DELETE /api/auth/mfa/{method_id}": func(o own, x ids) []probeReq { return one("DELETE", "/api/auth/mfa/"+x.mfa, nil) },
	// The device flow's client_id and device_code are not tenant ids: the
	// grant is bound to whoever redeems it.
	"POST /api/auth/device-code":  nil,
	"POST /api/auth/device-token": nil,
}
