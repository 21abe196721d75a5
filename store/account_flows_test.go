package store

import (
	"context"
	"testing"
	"time"
)

func TestResetPasswordAndVerifyEmail(t *testing.T) {
	t.Parallel()
	db, _ := openTemp(t)
	ctx := context.Background()
	u := &User{Email: "pw@example.com", PasswordHash: "old"}
	if _, err := db.CreateAccount(ctx, u); err != nil {
		t.Fatal(err)
	}
	l := newLogin("web")
	l.UserID = u.ID
	if _, err := db.StartLogin(ctx, l); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateEmailToken(ctx, u.ID, TokenReset, []byte("reset"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateEmailToken(ctx, u.ID, TokenVerify, []byte("verify"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := db.VerifyEmail(ctx, []byte("reset")); ErrorCode(err) != EInvalid {
		t.Fatalf("a reset token verifies the address: %v", err)
	}
	if err := db.VerifyEmail(ctx, []byte("verify")); err != nil {
		t.Fatal(err)
	}
	if err := db.VerifyEmail(ctx, []byte("verify")); ErrorCode(err) != EInvalid {
		t.Fatalf("a verify token works twice: %v", err)
	}
	uid, err := db.ResetPassword(ctx, []byte("reset"), "new")
	if err != nil || uid != u.ID {
		t.Fatalf("reset: %q %v", uid, err)
	}
	if _, err := db.ResetPassword(ctx, []byte("reset"), "newer"); ErrorCode(err) != EInvalid {
		t.Fatalf("a reset token works twice: %v", err)
	}
	got, _ := db.FindUserByID(ctx, u.ID)
	if got.PasswordHash != "new" || got.EmailVerifiedAt == nil {
		t.Fatalf("after reset: %+v", got)
	}
	if live, _ := db.FindActiveAuthSessions(ctx, u.ID); len(live) != 0 {
		t.Fatalf("%d sessions survived the reset", len(live))
	}
}

func TestEnrolMFAAndBackupCodes(t *testing.T) {
	t.Parallel()
	db, _ := openTemp(t)
	ctx := context.Background()
	u := &User{Email: "mfa@example.com", PasswordHash: "x"}
	if _, err := db.CreateAccount(ctx, u); err != nil {
		t.Fatal(err)
	}
	codes := [][]byte{[]byte("c1"), []byte("c2")}
	if _, err := db.ReplaceBackupCodes(ctx, u.ID, codes); ErrorCode(err) != EInvalid {
		t.Fatalf("backup codes without a factor: %v", err)
	}
	for i, wantFirst := range []bool{true, false} {
		first, err := db.EnrolMFA(ctx, &MFAMethod{ID: NewID(), UserID: u.ID, Kind: MFATOTP, Name: "phone"}, codes)
		if err != nil || first != wantFirst {
			t.Fatalf("enrolment %d: first %v (%v), want %v", i, first, err, wantFirst)
		}
	}
	if ok, err := db.UseBackupCode(ctx, u.ID, []byte("c1")); !ok || err != nil {
		t.Fatalf("a backup code of the first enrolment: %v %v", ok, err)
	}
	if _, err := db.ReplaceBackupCodes(ctx, u.ID, [][]byte{[]byte("c3")}); err != nil {
		t.Fatal(err)
	}
	if ok, _ := db.UseBackupCode(ctx, u.ID, []byte("c2")); ok {
		t.Fatal("an old backup code works after the set was replaced")
	}
	for i := 2; i < MaxPrimaryMFA; i++ {
		if _, err := db.EnrolMFA(ctx, &MFAMethod{ID: NewID(), UserID: u.ID, Kind: MFATOTP}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.EnrolMFA(ctx, &MFAMethod{ID: NewID(), UserID: u.ID, Kind: MFATOTP}, nil); ErrorCode(err) != EConflict {
		t.Fatalf("factor %d: %v, want the limit", MaxPrimaryMFA+1, err)
	}
}
