package auth

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestHasher(t *testing.T) {
	h := NewHasher(2)
	ctx := context.Background()
	enc, err := h.Hash(ctx, "correct horse")
	if err != nil || !strings.HasPrefix(enc, "$argon2id$v=19$m=12288,t=3,p=1$") {
		t.Fatalf("hash %q, %v", enc, err)
	}
	if ok, err := h.Verify(ctx, enc, "correct horse"); !ok || err != nil {
		t.Fatalf("right password: %v %v", ok, err)
	}
	if ok, _ := h.Verify(ctx, enc, "correct horsE"); ok {
		t.Fatal("wrong password accepted")
	}
	// No account: the dummy hash is checked and the answer is always false.
	if ok, err := h.Verify(ctx, "", "correct horse"); ok || err != nil {
		t.Fatalf("empty hash: %v %v", ok, err)
	}
	// The dummy costs what a real hash costs to check: the same parameters
	// and key length (an unknown address must not answer faster).
	if _, mem, tm, p, err := parseHash(h.dummy); err != nil || NeedsRehash(h.dummy) || mem != argonMemory || tm != argonTime || p != argonThreads || len(h.dummy) != len(enc) {
		t.Fatalf("dummy %q (%v) is not a hash with today's parameters like %q", h.dummy, err, enc)
	}
	if _, err := h.Verify(ctx, "$bcrypt$nope", "x"); err == nil {
		t.Fatal("unknown format accepted")
	}
	if NeedsRehash(enc) {
		t.Fatal("a hash with the current parameters needs a rehash")
	}
	// A hash made with other parameters verifies with its own, and needs
	// one.
	old := strings.Replace(enc, "m=12288,t=3", "m=19456,t=2", 1)
	if !NeedsRehash(old) || NeedsRehash("$bcrypt$nope") || NeedsRehash("") {
		t.Fatal("NeedsRehash: wrong answer for older parameters or a foreign format")
	}
	if ok, _ := h.Verify(ctx, old, "correct horse"); ok {
		t.Fatal("a key checked against other parameters than its own matched")
	}
	again, _ := h.Hash(ctx, "correct horse")
	if again == enc {
		t.Fatal("two hashes of one password are equal: salt missing")
	}
}

func TestHasherCapsConcurrency(t *testing.T) {
	h := NewHasher(1)
	h.slots <- struct{}{} // the one slot is busy
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := h.Hash(ctx, "x"); err == nil {
		t.Fatal("a hash ran beyond the cap")
	}
	<-h.slots
	var running, peak atomic.Int32
	var wg sync.WaitGroup
	h2 := NewHasher(2)
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := h2.acquire(context.Background()); err != nil {
				t.Error(err)
				return
			}
			n := running.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			time.Sleep(5 * time.Millisecond)
			running.Add(-1)
			h2.release()
		}()
	}
	wg.Wait()
	if peak.Load() > 2 {
		t.Fatalf("%d hashes at once, cap 2", peak.Load())
	}
}

func TestSignerTypesExpiryAndCache(t *testing.T) {
	if _, err := NewSigner([]byte("short")); err == nil {
		t.Fatal("short key accepted")
	}
	s, _ := NewSigner([]byte(strings.Repeat("k", 64)))
	now := time.Now()
	s.Now = func() time.Time { return now }
	tok, c, err := s.Issue(TypeAccess, "user-1", "sess-1", "org-1", now, time.Minute)
	if err != nil || c.Type != TypeAccess {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // second time from the cache
		got, err := s.Verify(tok, TypeAccess)
		if err != nil || got.Subject != "user-1" || got.Session != "sess-1" || got.Org != "org-1" {
			t.Fatalf("verify #%d: %v %v", i, got, err)
		}
		if _, err := s.Verify(tok, TypeMFA); err == nil {
			t.Fatalf("verify #%d: an access token passed as an MFA token", i)
		}
	}
	// Mutating a returned value does not poison the cache.
	got, _ := s.Verify(tok, TypeAccess)
	got.Subject = "someone-else"
	if again, _ := s.Verify(tok, TypeAccess); again.Subject != "user-1" {
		t.Fatal("cache shares claims with callers")
	}
	now = now.Add(time.Minute + 6*time.Second) // past exp plus leeway
	if _, err := s.Verify(tok, TypeAccess); err == nil {
		t.Fatal("expired cached token accepted")
	}
	other, _ := NewSigner([]byte(strings.Repeat("q", 64)))
	other.Now = s.Now
	fresh, _, _ := s.Issue(TypeAccess, "u", "s", "o", now, time.Minute)
	if _, err := other.Verify(fresh, TypeAccess); err == nil {
		t.Fatal("a token of another key accepted")
	}
	// Not yet valid (issued in the future beyond the leeway).
	future, _, _ := s.Issue(TypeAccess, "u", "s", "o", now.Add(time.Hour), 2*time.Hour)
	if _, err := s.Verify(future, TypeAccess); err == nil {
		t.Fatal("a token from the future accepted")
	}
}

func TestRefreshTokens(t *testing.T) {
	s, _ := NewSigner([]byte(strings.Repeat("k", 64)))
	id := "0190c0de-0000-7000-8000-000000000000"
	a, b := s.RefreshToken(id, []byte("salt"), 1), s.RefreshToken(id, []byte("salt"), 1)
	if a != b || a == s.RefreshToken(id, []byte("salt"), 2) || a == s.RefreshToken(id, []byte("pepper"), 1) {
		t.Fatal("refresh tokens must depend on exactly session, salt and generation")
	}
	if sid, ok := SessionOfRefresh(a); !ok || sid != id {
		t.Fatalf("session of refresh: %q %v", sid, ok)
	}
	if _, ok := SessionOfRefresh("garbage"); ok {
		t.Fatal("garbage named a session")
	}
	if len(HashToken("x")) != 32 || RandomToken(32) == RandomToken(32) {
		t.Fatal("hash or random token")
	}
}
