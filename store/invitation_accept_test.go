package store

import (
	"context"
	"testing"
	"time"
)

func TestInvitationAccept(t *testing.T) {
	t.Parallel()
	db, _ := openTemp(t)
	ctx := context.Background()
	owner := &User{Email: "owner@example.com", PasswordHash: "x"}
	org, err := db.CreateAccount(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	invite := func(email, token string) {
		t.Helper()
		if err := db.CreateInvitation(ctx, &Invitation{OrgID: org.ID, Email: email, Role: "member", TokenHash: []byte(token),
			InvitedBy: owner.ID, ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	member := &User{Email: "member@example.com", PasswordHash: "x"}
	if _, err := db.CreateAccount(ctx, member); err != nil {
		t.Fatal(err)
	}
	invite("member@example.com", "tok-member")
	invite("new@example.com", "tok-new")
	invite("taken@example.com", "tok-taken")
	if _, err := db.CreateAccount(ctx, &User{Email: "taken@example.com", PasswordHash: "x"}); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name   string
		accept func() error
		code   string
		reason string
	}{
		{"joins as the invited address", func() error {
			_, _, err := db.JoinByInvitation(ctx, []byte("tok-member"), member.ID, " Member@example.com", "jti", time.Hour)
			return err
		}, "", ""},
		{"a used token is refused", func() error {
			_, _, err := db.JoinByInvitation(ctx, []byte("tok-member"), member.ID, "member@example.com", "jti", time.Hour)
			return err
		}, EInvalid, "invitation_used"},
		{"another address is refused", func() error {
			_, _, err := db.JoinByInvitation(ctx, []byte("tok-new"), member.ID, "member@example.com", "jti", time.Hour)
			return err
		}, EForbidden, "invitation_email_mismatch"},
		{"an unknown token is refused", func() error {
			_, _, err := db.SignupByInvitation(ctx, []byte("nope"), &User{PasswordHash: "x"}, newLogin("web"))
			return err
		}, EInvalid, "invalid_invitation"},
		{"an address with an account must sign in first", func() error {
			_, _, err := db.SignupByInvitation(ctx, []byte("tok-taken"), &User{PasswordHash: "x"}, newLogin("web"))
			return err
		}, EConflict, "account_exists"},
		{"a new account joins, verified", func() error {
			u, l := &User{Name: "New", PasswordHash: "x"}, newLogin("web")
			inv, _, err := db.SignupByInvitation(ctx, []byte("tok-new"), u, l)
			if err == nil && (u.Email != "new@example.com" || u.EmailVerifiedAt == nil || u.CurrentOrgID != inv.OrgID || l.UserID != u.ID) {
				t.Errorf("new account %+v, login user %q", u, l.UserID)
			}
			return err
		}, "", ""},
	} {
		err := tc.accept()
		var reason string
		if e, ok := err.(*Error); ok {
			reason = e.Reason
		}
		if ErrorCode(err) != tc.code && !(tc.code == "" && err == nil) || reason != tc.reason {
			t.Errorf("%s: %v (code %q reason %q), want %q %q", tc.name, err, ErrorCode(err), reason, tc.code, tc.reason)
		}
	}
	for _, email := range []string{"member@example.com", "new@example.com"} {
		u, err := db.FindUserByEmail(ctx, email)
		if err != nil {
			t.Fatal(err)
		}
		if role, err := db.FindRole(ctx, org.ID, u.ID); err != nil || role != "member" || u.CurrentOrgID != org.ID {
			t.Errorf("%s: role %q (%v), current org %q", email, role, err, u.CurrentOrgID)
		}
	}
	taken, err := db.FindUserByEmail(ctx, "taken@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.FindRole(ctx, org.ID, taken.ID); err == nil {
		t.Errorf("the refused signup joined the org")
	}
}
