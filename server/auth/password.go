// Package auth holds the credential primitives: password hashing, signed
// tokens and random secrets. It knows nothing about HTTP or the database.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Argon2id parameters: one of OWASP's Password Storage Cheat Sheet
// configurations (m=12 MiB, t=3, p=1), which it rates of equal strength to
// its 19 MiB t=2 and 7 MiB t=5 rows, trading memory for passes. Of those,
// 12 MiB t=3 costs ~20 % less CPU a hash than 19 MiB t=2 on the 2-core
// machines we measure (the blocks stay nearer the CPU and fewer pages are
// zeroed and faulted in), and a burst of logins holds 37 % less memory.
// Hashes stored with other parameters still verify with their own and are
// redone with these at the next successful sign-in (NeedsRehash).
const (
	argonTime    = 3
	argonMemory  = 12 * 1024
	argonThreads = 1
	argonKeyLen  = 32
	argonSaltLen = 16
)

// Hasher hashes and checks passwords with argon2id. Concurrency is capped so a
// burst of logins cannot take all memory and CPU: excess callers wait their turn.
type Hasher struct {
	slots chan struct{}
	mem   memReturn
	// dummy is checked when the account does not exist so that unknown
	// addresses cost the same time as wrong passwords: a hash in our own
	// format and parameters whose salt and key are random bytes. Checking it
	// does the same argon2 work as a real one, and making it costs none (a
	// real hash here took 15-20 ms of every start, before the first request).
	dummy string
}

// NewHasher returns a hasher allowing n hashes at once (0: GOMAXPROCS, the
// CPUs this process may use: more at once would only queue for a CPU while
// holding its memory).
func NewHasher(n int) *Hasher {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	h := &Hasher{slots: make(chan struct{}, n)}
	h.dummy = encodeHash(randomBytes(argonSaltLen), randomBytes(argonKeyLen))
	return h
}

func (h *Hasher) acquire(ctx context.Context) error {
	select {
	case h.slots <- struct{}{}:
		h.mem.hashStarted()
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (h *Hasher) release() {
	<-h.slots
	if len(h.slots) == 0 {
		h.mem.hashEnded() // the burst may be over: return its memory soon
	}
}

// Hash returns the PHC string of password.
func (h *Hasher) Hash(ctx context.Context, password string) (string, error) {
	if err := h.acquire(ctx); err != nil {
		return "", err
	}
	defer h.release()
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	return encodeHash(salt, key), nil
}

// encodeHash is the PHC string of salt and key under today's parameters.
func encodeHash(salt, key []byte) string {
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key))
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand, Go 1.24+)
	return b
}

// Verify reports whether password matches encoded. An empty encoded hash
// checks against the dummy so the caller's timing does not reveal anything.
func (h *Hasher) Verify(ctx context.Context, encoded, password string) (bool, error) {
	if encoded == "" {
		encoded = h.dummy
		ok, err := h.verify(ctx, encoded, password)
		_ = ok
		return false, err
	}
	return h.verify(ctx, encoded, password)
}

// NeedsRehash reports whether encoded, a hash that just verified, was made
// with other parameters than Hash uses now.
func NeedsRehash(encoded string) bool {
	parts, mem, t, p, err := parseHash(encoded)
	return err == nil && (parts[2] != fmt.Sprintf("v=%d", argon2.Version) || mem != argonMemory || t != argonTime || p != argonThreads)
}

// parseHash splits a PHC argon2id string and reads its parameters.
func parseHash(encoded string) (parts []string, mem, t uint32, p uint8, err error) {
	parts = strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return nil, 0, 0, 0, errors.New("auth: unknown password hash format")
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &mem, &t, &p); err != nil {
		return nil, 0, 0, 0, fmt.Errorf("auth: bad hash parameters: %w", err)
	}
	return parts, mem, t, p, nil
}

func (h *Hasher) verify(ctx context.Context, encoded, password string) (bool, error) {
	parts, mem, t, p, err := parseHash(encoded)
	if err != nil {
		return false, err
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil {
		return false, err
	}
	want, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil {
		return false, err
	}
	if err := h.acquire(ctx); err != nil {
		return false, err
	}
	defer h.release()
	got := argon2.IDKey([]byte(password), salt, t, mem, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}
