package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server"
)

func TestOpenAPIDocumentDescribesEveryRoute(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	r := env.newClient().must(200, "GET", "/api/openapi.json", nil)
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("content type %q", r.Header.Get("Content-Type"))
	}
	var doc struct {
		OpenAPI string `json:"openapi"`
		Info    struct {
			Version string `json:"version"`
			Title   string `json:"title"`
		} `json:"info"`
		Paths      map[string]map[string]map[string]any `json:"paths"`
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		t.Fatalf("not valid JSON: %v", err)
	}
	if doc.OpenAPI != "3.1.0" || doc.Info.Version != "0.1.0" || doc.Info.Title == "" {
		t.Fatalf("openapi %q, info.version %q", doc.OpenAPI, doc.Info.Version)
	}
	routes := env.Srv.Routes()
	if len(routes) < 20 {
		t.Fatalf("route table has %d routes", len(routes))
	}
	ops := 0
	for _, p := range doc.Paths {
		ops += len(p)
	}
	if ops != len(routes) {
		t.Fatalf("document has %d operations, route table %d", ops, len(routes))
	}
	ids := map[string]bool{}
	for _, rt := range routes {
		op, ok := doc.Paths[rt.Path][strings.ToLower(rt.Method)]
		if !ok {
			t.Fatalf("%s %s missing from the document", rt.Method, rt.Path)
		}
		if rt.Perm != "" && op["x-permission"] != string(rt.Perm) {
			t.Fatalf("%s %s: x-permission %v, want %s", rt.Method, rt.Path, op["x-permission"], rt.Perm)
		}
		if rt.Perm == "" && op["x-permission"] != nil {
			t.Fatalf("%s %s: x-permission %v on a route without one", rt.Method, rt.Path, op["x-permission"])
		}
		id, _ := op["operationId"].(string)
		if id == "" || ids[id] {
			t.Fatalf("%s %s: operationId %q empty or repeated", rt.Method, rt.Path, id)
		}
		ids[id] = true
		if _, ok := op["responses"].(map[string]any)[itoa(rt.Status)]; !ok {
			t.Fatalf("%s %s: no %d response", rt.Method, rt.Path, rt.Status)
		}
		wantAuth := map[server.AuthMode]string{server.AuthNone: "none", server.AuthAny: "any", server.AuthHuman: "human"}[rt.Auth]
		if op["x-auth"] != wantAuth {
			t.Fatalf("%s %s: x-auth %v, want %s", rt.Method, rt.Path, op["x-auth"], wantAuth)
		}
		tags, _ := op["tags"].([]any)
		hasMCP := false
		for _, tg := range tags {
			hasMCP = hasMCP || tg == "mcp-exposed"
		}
		if hasMCP != rt.MCP {
			t.Fatalf("%s %s: mcp-exposed tag %v, route MCP %v", rt.Method, rt.Path, hasMCP, rt.MCP)
		}
	}
	// Every $ref points at a schema that exists.
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok {
				name := strings.TrimPrefix(ref, "#/components/schemas/")
				if _, ok := doc.Components.Schemas[name]; !ok {
					t.Fatalf("dangling $ref %s", ref)
				}
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	var whole any
	_ = json.Unmarshal(r.Body, &whole)
	walk(whole)
	// The request schema carries the validation rules.
	reg := doc.Components.Schemas["RegisterRequest"].(map[string]any)
	props := reg["properties"].(map[string]any)
	if props["email"].(map[string]any)["format"] != "email" || props["password"].(map[string]any)["minLength"] != 8.0 {
		t.Fatalf("RegisterRequest schema: %v", reg)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// specRecords are the record names the spec fixes (sections 2 and 4); the
// OpenAPI document must name its schemas after them.
var specRecords = []string{"AcceptInviteRequest", "AddProjectMemberRequest", "AgentFunnelSummaryOut", "BackupCodesResponse",
	"Body_upload_avatar_api_auth_me_avatar_post", "BootstrapRequest", "BootstrapResponse", "ChangePasswordRequest",
	"CliGrantDenyRequest", "CliGrantInfoResponse", "CliGrantRedeemRequest", "ClientErrorIn", "ClientEventIn", "DashboardStats",
	"DeviceCodeRequest", "DeviceCodeResponse", "DeviceTokenError", "DeviceTokenRequest", "DeviceTokenSuccess",
	"ForgotPasswordRequest", "HTTPValidationError", "InvitationOut", "InviteCreate", "InviteResponse", "LoginRequest",
	"LoginResponse", "MemberOut", "MfaChallengeRequest", "MfaEnrollResponse", "MfaMethodOut", "MfaTotpSetupResponse",
	"MfaTotpVerifyRequest", "MfaWebauthnAuthOptionsRequest", "MfaWebauthnRegisterVerifyRequest", "OnboardingStatusResponse",
	"OrgDashboardSummary", "OrgResourceSummary", "OrgWithRoleOut", "OrganizationBrandingUpdate", "OrganizationCreate",
	"OrganizationOut", "OrganizationUpdate", "PaginatedResponse_TaskListOut_", "PreferenceOut", "PreferencePut",
	"ProjectCreate", "ProjectFeatureFlagsOut", "ProjectMemberOut", "ProjectOut", "ProjectResourceSummary", "ProjectUpdate",
	"RegisterRequest", "ResetPasswordRequest", "SessionIndexOut", "SessionIndexResponse", "SessionOut",
	"TaskBulkDeleteRequest", "TaskBulkDeleteResponse", "TaskCreate", "TaskListOut", "TaskOut", "TaskPreviewOut",
	"TaskPreviewRequest", "TaskStatsOut", "TaskTemplateOut", "TaskTriggerResponse", "TaskUpdate", "TokenResponse",
	"UpdateMemberRoleRequest", "UpdateProjectMemberRequest", "UserOut", "UserUpdate", "VerifyEmailRequest", "VersionResponse"}

func TestOpenAPINamesTheSpecRecords(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	doc := env.newClient().must(200, "GET", "/api/openapi.json", nil).JSON()
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	for _, name := range specRecords {
		if _, ok := schemas[name]; !ok {
			t.Errorf("schema %s of the spec is missing from the OpenAPI document", name)
		}
	}
}
