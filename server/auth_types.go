package server

import (
	"context"
	"time"

	"github.com/opsagent/opsagent/store"
)

// RegisterRequest is fixed by CONVENTIONS.md.
type RegisterRequest struct {
	Email    string `json:"email" validate:"required,email,max=254"`
	Password string `json:"password" validate:"required,min=8,max=256"`
	Name     string `json:"name,omitempty" validate:"max=120"`
}

// LoginRequest is fixed by CONVENTIONS.md.
type LoginRequest struct {
	Email    string `json:"email" validate:"required,min=1,max=254"`
	Password string `json:"password" validate:"required,min=1,max=256"`
}

// TokenResponse is fixed by CONVENTIONS.md; cookies carry the same tokens.
type TokenResponse struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int    `json:"expires_in"`
}

// LoginResponse is a TokenResponse, or the second-factor prompt.
type LoginResponse struct {
	AccessToken string   `json:"access_token,omitempty"`
	TokenType   string   `json:"token_type,omitempty"`
	ExpiresIn   int      `json:"expires_in,omitempty"`
	MFARequired bool     `json:"mfa_required,omitempty"`
	MFAToken    string   `json:"mfa_token,omitempty"`
	MFAMethods  []string `json:"mfa_methods,omitempty"`
}

// RefreshRequest lets non-browser clients send the refresh token in the body.
type RefreshRequest struct {
	RefreshToken string `json:"refresh_token,omitempty" validate:"max=200"`
}

// AuthConfigOut tells the console which flows to offer.
type AuthConfigOut struct {
	Signup                 string   `json:"signup"`
	SignupEnabled          bool     `json:"signup_enabled"`
	PasswordResetEnabled   bool     `json:"password_reset_enabled"`
	EmailDelivery          string   `json:"email_delivery"` // smtp or outbox
	MFAMethods             []string `json:"mfa_methods"`
	DeviceFlow             bool     `json:"device_flow"`
	PasswordMinLength      int      `json:"password_min_length"`
	AccessTokenTTLSeconds  int      `json:"access_token_ttl_seconds"`
	RefreshGraceSeconds    int      `json:"refresh_grace_seconds"`
	BaseURL                string   `json:"base_url,omitempty"`
	RefreshTokenTTLSeconds int      `json:"refresh_token_ttl_seconds"`
}

// UserOut is a user as they see themself.
type UserOut struct {
	ID            string     `json:"id"`
	Email         string     `json:"email"`
	Name          string     `json:"name"`
	EmailVerified bool       `json:"email_verified"`
	AvatarURL     *string    `json:"avatar_url"`
	CurrentOrgID  string     `json:"current_org_id"`
	Role          string     `json:"role"`
	MFAEnabled    bool       `json:"mfa_enabled"`
	LastLoginAt   *time.Time `json:"last_login_at"`
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     time.Time  `json:"updated_at"`
}

// UserUpdate changes the profile.
type UserUpdate struct {
	Name *string `json:"name,omitempty" validate:"min=1,max=120"`
}

// AvatarUpload documents the multipart form (Body_upload_avatar_api_auth_me_avatar_post).
type AvatarUpload struct {
	File []byte `json:"file" format:"binary" validate:"required"`
}

func (AvatarUpload) schemaName() string { return "Body_upload_avatar_api_auth_me_avatar_post" }

// ChangePasswordRequest needs the current password.
type ChangePasswordRequest struct {
	CurrentPassword string `json:"current_password" validate:"required,min=1,max=256"`
	NewPassword     string `json:"new_password" validate:"required,min=8,max=256"`
}

// ForgotPasswordRequest names an address.
type ForgotPasswordRequest struct {
	Email string `json:"email" validate:"required,min=1,max=254"`
}

// ResetPasswordRequest carries the mailed token.
type ResetPasswordRequest struct {
	Token       string `json:"token" validate:"required,min=1,max=200"`
	NewPassword string `json:"new_password" validate:"required,min=8,max=256"`
}

// VerifyEmailRequest carries the mailed token.
type VerifyEmailRequest struct {
	Token string `json:"token" validate:"required,min=1,max=200"`
}

// MessageOut is a plain acknowledgement.
type MessageOut struct {
	Detail string `json:"detail"`
}

// AccountDeletionOut acknowledges an erasure request.
type AccountDeletionOut struct {
	Detail    string `json:"detail"`
	RequestID string `json:"request_id"`
	Status    string `json:"status"`
}

// SessionOut is a login session (identity schema).
type SessionOut struct {
	ID         string    `json:"id"`
	Kind       string    `json:"kind"`
	UserAgent  string    `json:"user_agent"`
	IP         string    `json:"ip"`
	Current    bool      `json:"current"`
	CreatedAt  time.Time `json:"created_at"`
	LastUsedAt time.Time `json:"last_used_at"`
	ExpiresAt  time.Time `json:"expires_at"`
}

// VersionResponse describes the running build.
type VersionResponse struct {
	Version       string    `json:"version"`
	APIVersion    string    `json:"api_version"`
	GoVersion     string    `json:"go_version"`
	StartedAt     time.Time `json:"started_at"`
	UptimeSeconds int64     `json:"uptime_seconds"`
	LLMConfigured bool      `json:"llm_configured"`
}

func (s *Server) userOut(ctx context.Context, u *store.User, role string) UserOut {
	has, err := s.db.HasMFA(ctx, u.ID)
	if err != nil {
		// Shown as enabled: the flag must not hide a factor the account has.
		loggerFrom(ctx).ErrorContext(ctx, "mfa lookup failed", "err", err)
		has = true
	}
	return userOutMFA(u, role, has)
}

// userOutMFA is userOut with the MFA flag already known.
func userOutMFA(u *store.User, role string, mfa bool) UserOut {
	out := UserOut{ID: u.ID, Email: u.Email, Name: u.Name, EmailVerified: u.EmailVerifiedAt != nil,
		CurrentOrgID: u.CurrentOrgID, Role: role, LastLoginAt: u.LastLoginAt, CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt}
	if u.Avatar != "" {
		url := "/api/users/" + u.ID + "/avatar?v=" + u.Avatar[len(u.Avatar)-min(8, len(u.Avatar)):]
		out.AvatarURL = &url
	}
	out.MFAEnabled = mfa
	return out
}
