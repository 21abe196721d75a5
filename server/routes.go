package server

import "net/http"

// routeTable is the one table of routes. Each group lives beside its
// handlers; this function is where a newcomer finds them all.
func (s *Server) routeTable() []*Route {
	var rs []*Route
	for _, group := range [][]*Route{
		s.metaRoutes(),
		s.opsRoutes(),
		s.authRoutes(),
		s.meRoutes(),
		s.preferenceRoutes(),
		s.observabilityRoutes(),
		s.mfaRoutes(),
		s.reauthRoutes(),
		s.deviceRoutes(),
		s.taskRoutes(),
		s.authOrgRoutes(),
		s.orgRoutes(),
		s.retentionRoutes(),
		s.memberRoutes(),
		s.invitationRoutes(),
		s.projectRoutes(),
		s.projectMemberRoutes(),
		s.apiKeyRoutes(),
		s.auditRoutes(),
		s.onboardingRoutes(),
		s.secretRoutes(),
		s.llmKeyRoutes(),
		s.modelSettingsRoutes(),
		s.knowledgeRoutes(),
		s.ragObservabilityRoutes(),
		s.memoryRoutes(),
		s.webhookRoutes(),
		s.webhookListRoutes(),
		s.webhookMatchRoutes(),
		s.approvalRoutes(),
		s.incidentRoutes(),
		s.sessionRoutes(),
		s.chatRoutes(),
		s.usageRoutes(),
		s.evalRoutes(),
		s.evalRecordRoutes(),
		s.dashboardRoutes(),
		s.ruleRoutes(),
		s.commandPolicyRoutes(),
		s.sandboxProfileRoutes(),
		s.approvalRememberRoutes(),
		s.budgetRoutes(),
		s.billingRoutes(),
		s.billingUsageRoutes(),
		s.billingStripeRoutes(),
		s.integrationRoutes(),
		s.integrationCheckRoutes(),
		s.connectorRoutes(),
		s.channelRoutes(),
		s.taskChannelRoutes(),
		s.commandRoutes(),
		s.heartbeatRoutes(),
		s.windowRoutes(),
		s.ruleWhatIfRoutes(),
		s.postmortemRoutes(),
		s.changeRoutes(),
		s.findingRoutes(),
		s.agentSettingsRoutes(),
		s.mcpRoutes(),
	} {
		rs = append(rs, group...)
	}
	return rs
}

// metaRoutes: version and the interface description.
func (s *Server) metaRoutes() []*Route {
	return []*Route{
		{Method: http.MethodGet, Path: "/api/version", Summary: "Server version", Tags: []string{"meta"},
			Auth: AuthNone, Resp: VersionResponse{}, Status: 200, Handle: s.handleVersion},
		{Method: http.MethodGet, Path: "/api/openapi.json", Summary: "OpenAPI 3.1 document of this server", Tags: []string{"meta"},
			Auth: AuthNone, Status: 200, Handle: s.handleOpenAPI},
	}
}

// authRoutes: sign-up, sign-in, tokens and login sessions.
func (s *Server) authRoutes() []*Route {
	tags := []string{"auth"}
	return []*Route{
		{Method: "GET", Path: "/api/auth/config", Summary: "Public auth capabilities", Tags: tags, Auth: AuthNone, Resp: AuthConfigOut{}, Status: 200, Handle: s.handleAuthConfig},
		{Method: "POST", Path: "/api/auth/register", Summary: "Create an account and its personal organization", Tags: tags, Auth: AuthNone, Body: RegisterRequest{}, Resp: TokenResponse{}, Status: 201, MaxBody: 16 << 10, Handle: s.handleRegister},
		{Method: "POST", Path: "/api/auth/login", Summary: "Sign in with email and password", Tags: tags, Auth: AuthNone, Body: LoginRequest{}, Resp: LoginResponse{}, Status: 200, MaxBody: 16 << 10, Handle: s.handleLogin},
		{Method: "POST", Path: "/api/auth/logout", Summary: "Sign out this session (best effort; clears cookies)", Tags: tags, Auth: AuthNone, Status: 204, Handle: s.handleLogout},
		{Method: "POST", Path: "/api/auth/refresh", Summary: "Rotate the refresh token and get a new access token", Tags: tags, Auth: AuthNone, Body: RefreshRequest{}, Resp: TokenResponse{}, Status: 200, MaxBody: 16 << 10, Handle: s.handleRefresh},
		{Method: "POST", Path: "/api/auth/logout-all", Summary: "Sign out every session and void earlier tokens and keys", Tags: tags, Auth: AuthHuman, Status: 204, Handle: s.handleLogoutAll},
		{Method: "DELETE", Path: "/api/auth/me/account", Summary: "Request erasure of the account", Tags: tags, Auth: AuthHuman, Resp: AccountDeletionOut{}, Status: 202, Handle: s.handleDeleteAccount},
		{Method: "POST", Path: "/api/auth/resend-verify", Summary: "Send the address verification mail again", Tags: tags, Auth: AuthNone, Body: ForgotPasswordRequest{}, Resp: MessageOut{}, Status: 200, MaxBody: 16 << 10, Handle: s.handleResendVerify},
		{Method: "POST", Path: "/api/auth/change-password", Summary: "Change the password (other sessions are signed out)", Tags: tags, Auth: AuthHuman, Body: ChangePasswordRequest{}, Status: 204, MaxBody: 16 << 10, Handle: s.handleChangePassword},
		{Method: "POST", Path: "/api/auth/forgot-password", Summary: "Mail a password reset link", Tags: tags, Auth: AuthNone, Body: ForgotPasswordRequest{}, Resp: MessageOut{}, Status: 200, MaxBody: 16 << 10, Handle: s.handleForgotPassword},
		{Method: "POST", Path: "/api/auth/reset-password", Summary: "Set a new password with a mailed token", Tags: tags, Auth: AuthNone, Body: ResetPasswordRequest{}, Status: 204, MaxBody: 16 << 10, Handle: s.handleResetPassword},
		{Method: "POST", Path: "/api/auth/verify-email", Summary: "Verify the address with a mailed token", Tags: tags, Auth: AuthNone, Body: VerifyEmailRequest{}, Status: 204, MaxBody: 16 << 10, Handle: s.handleVerifyEmail},
		{Method: "GET", Path: "/api/auth/sessions", Summary: "List my login sessions, marking the current one", Tags: tags, Auth: AuthHuman, Resp: []SessionOut{}, Status: 200, Handle: s.handleListSessions},
		{Method: "DELETE", Path: "/api/auth/sessions/{session_id}", Summary: "Revoke one of my login sessions", Tags: tags, Auth: AuthHuman, Status: 204, Handle: s.handleDeleteSession},
	}
}

// meRoutes: the signed-in user's own record and avatar.
func (s *Server) meRoutes() []*Route {
	tags := []string{"auth"}
	return []*Route{
		{Method: "GET", Path: "/api/auth/me", Summary: "The signed-in user", Tags: tags, Auth: AuthAny, Resp: UserOut{}, Status: 200, MCP: true, Handle: s.handleMe},
		{Method: "PATCH", Path: "/api/auth/me", Summary: "Update my profile", Tags: tags, Auth: AuthHuman, Body: UserUpdate{}, Resp: UserOut{}, Status: 200, Handle: s.handleUpdateMe},
		{Method: "POST", Path: "/api/auth/me/avatar", Summary: "Upload my avatar (PNG, JPEG or GIF, at most 2 MiB)", Tags: tags, Auth: AuthHuman, Multipart: true, Body: AvatarUpload{}, Resp: UserOut{}, Status: 200, MaxBody: avatarMaxBytes + 64<<10, Handle: s.handleUploadAvatar},
		{Method: "DELETE", Path: "/api/auth/me/avatar", Summary: "Remove my avatar", Tags: tags, Auth: AuthHuman, Resp: UserOut{}, Status: 200, Handle: s.handleDeleteAvatar},
		{Method: "GET", Path: "/api/users/{user_id}/avatar", Summary: "A user's avatar image (self or a member of a shared organization)", Tags: tags, Auth: AuthAny, Status: 200, Handle: s.handleGetAvatar},
	}
}
