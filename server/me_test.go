package server_test

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/store"
)

func TestMeReadAndUpdate(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := env.register("ada@example.com")
	me := c.must(200, "GET", "/api/auth/me", nil).JSON()
	for _, k := range []string{"id", "email", "name", "email_verified", "avatar_url", "current_org_id", "role", "mfa_enabled", "last_login_at", "created_at", "updated_at"} {
		if _, ok := me[k]; !ok {
			t.Fatalf("UserOut lacks %s: %v", k, me)
		}
	}
	if _, ok := me["password_hash"]; ok {
		t.Fatal("UserOut leaks the password hash")
	}
	got := c.must(200, "PATCH", "/api/auth/me", map[string]any{"name": "  Ada Lovelace  "}).JSON()
	if got["name"] != "Ada Lovelace" {
		t.Fatalf("patched name: got %v", got["name"])
	}
	if c.must(200, "PATCH", "/api/auth/me", map[string]any{}).JSON()["name"] != "Ada Lovelace" {
		t.Fatal("an empty patch changed the name")
	}
	wantValidation(t, c.do("PATCH", "/api/auth/me", map[string]any{"name": "   "}), "body", "name")
	wantValidation(t, c.do("PATCH", "/api/auth/me", map[string]any{"name": ""}), "body", "name")
	wantValidation(t, c.do("PATCH", "/api/auth/me", map[string]any{"name": 7}), "body", "name")
	wantValidation(t, c.do("PATCH", "/api/auth/me", map[string]any{"name": strings.Repeat("n", 121)}), "body", "name")
	wantValidation(t, c.do("PATCH", "/api/auth/me", `{"name":`), "body")
	want401(t, "anonymous", env.newClient().do("GET", "/api/auth/me", nil))
}

func pngBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := 0; x < w; x++ {
		img.Set(x, x%h, color.RGBA{R: 200, G: 80, B: 20, A: 255})
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// uploadAvatar posts data as the multipart field "file".
func uploadAvatar(t *testing.T, c *client, data []byte) *resp {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", "avatar.png")
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(data)
	mw.Close()
	req, _ := http.NewRequest("POST", c.env.URL+"/api/auth/me/avatar", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return c.send(req)
}

func avatarFiles(t *testing.T, env *testEnv) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(env.Dir, "avatars"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestAvatarUploadServeAndDelete(t *testing.T) {
	t.Parallel()
	env := newEnv(t, openSignup)
	ada := env.register("ada@example.com")
	adaID := ada.userID()

	// Refusals write nothing.
	wantValidation(t, uploadAvatar(t, ada, []byte("GIF89a but not really an image")), "body", "file")
	wantValidation(t, uploadAvatar(t, ada, append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 100)...)), "body", "file")
	big := append(pngBytes(t, 8, 8), bytes.Repeat([]byte{0}, 2<<20)...) // over 2 MiB, within the request cap
	if r := uploadAvatar(t, ada, big); r.Status != 413 {
		t.Fatalf("2 MiB+ file: got %d %s, want 413", r.Status, r.Body)
	}
	huge := bytes.Repeat([]byte{0}, 3<<20) // over the request cap: refused by Content-Length
	if r := uploadAvatar(t, ada, huge); r.Status != 413 {
		t.Fatalf("3 MiB request: got %d, want 413", r.Status)
	}
	req, _ := http.NewRequest("POST", env.URL+"/api/auth/me/avatar", strings.NewReader(`{"file":"x"}`))
	req.Header.Set("Content-Type", "application/json")
	wantValidation(t, ada.send(req), "body", "file")
	if files := avatarFiles(t, env); len(files) != 0 {
		t.Fatalf("refused uploads left files: %v", files)
	}

	img := pngBytes(t, 64, 48)
	r := uploadAvatar(t, ada, img)
	if r.Status != 200 {
		t.Fatalf("upload: got %d %s", r.Status, r.Body)
	}
	url, _ := r.JSON()["avatar_url"].(string)
	if !strings.HasPrefix(url, "/api/users/"+adaID+"/avatar") {
		t.Fatalf("avatar_url: got %q", url)
	}
	got := ada.must(200, "GET", url, nil)
	if !bytes.Equal(got.Body, img) || got.Header.Get("Content-Type") != "image/png" || got.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("served avatar: %d bytes, type %q", len(got.Body), got.Header.Get("Content-Type"))
	}
	// Replacing removes the old file.
	uploadAvatar(t, ada, pngBytes(t, 10, 10))
	if files := avatarFiles(t, env); len(files) != 1 {
		t.Fatalf("after replacing: files %v, want one", files)
	}

	// Another tenant's user id reads exactly like a random id.
	eve := env.register("eve@example.com")
	foreign := eve.do("GET", "/api/users/"+adaID+"/avatar", nil)
	random := eve.do("GET", "/api/users/"+store.NewID()+"/avatar", nil)
	if foreign.Status != 404 || random.Status != 404 || !bytes.Equal(foreign.Body, random.Body) {
		t.Fatalf("other tenant: %d %s; random id: %d %s; want identical 404s", foreign.Status, foreign.Body, random.Status, random.Body)
	}
	if r := eve.do("GET", "/api/users/not-a-uuid/avatar", nil); r.Status != 404 {
		t.Fatalf("malformed id: got %d, want 404", r.Status)
	}
	// Someone sharing an org may see it.
	adaOrg := ada.must(200, "GET", "/api/auth/me", nil).JSON()["current_org_id"].(string)
	err := env.DB.AddMember(t.Context(), adaOrg, eve.userID(), "viewer")
	if err != nil {
		t.Fatal(err)
	}
	eve.must(200, "GET", "/api/users/"+adaID+"/avatar", nil)

	out := ada.must(200, "DELETE", "/api/auth/me/avatar", nil).JSON()
	if out["avatar_url"] != nil {
		t.Fatalf("avatar_url after delete: %v", out["avatar_url"])
	}
	if files := avatarFiles(t, env); len(files) != 0 {
		t.Fatalf("files after delete: %v", files)
	}
	if r := ada.do("GET", "/api/users/"+adaID+"/avatar", nil); r.Status != 404 {
		t.Fatalf("deleted avatar: got %d, want 404", r.Status)
	}
	ada.must(200, "DELETE", "/api/auth/me/avatar", nil) // idempotent
}

func TestSessionsListAndDelete(t *testing.T) {
	t.Parallel()
	env := newEnv(t, openSignup)
	a := env.register("ada@example.com")
	b := env.newClient()
	b.Header.Set("User-Agent", "second-browser/1.0")
	r := b.must(200, "POST", "/api/auth/login", map[string]any{"email": "ada@example.com", "password": pw})
	b.Token = r.JSON()["access_token"].(string)
	b.Header.Del("User-Agent")

	list := a.must(200, "GET", "/api/auth/sessions", nil).List()
	if len(list) != 2 {
		t.Fatalf("sessions: got %d, want 2", len(list))
	}
	var mine, theirs string
	for _, s := range list {
		if s["current"] == true {
			if mine != "" {
				t.Fatal("two sessions marked current")
			}
			mine = s["id"].(string)
		} else {
			theirs = s["id"].(string)
			if s["user_agent"] != "second-browser/1.0" || s["ip"] != "127.0.0.1" {
				t.Fatalf("other session: %v", s)
			}
		}
	}
	if mine == "" || theirs == "" {
		t.Fatalf("current session not marked: %v", list)
	}
	// The other client sees its own session as current.
	for _, s := range b.must(200, "GET", "/api/auth/sessions", nil).List() {
		if (s["id"] == theirs) != (s["current"] == true) {
			t.Fatalf("b's view marks the wrong session current: %v", s)
		}
	}

	// Someone else's session is a 404, like a random one.
	eve := env.register("eve@example.com")
	foreign := eve.do("DELETE", "/api/auth/sessions/"+theirs, nil)
	random := eve.do("DELETE", "/api/auth/sessions/"+store.NewID(), nil)
	if foreign.Status != 404 || random.Status != 404 || !bytes.Equal(foreign.Body, random.Body) {
		t.Fatalf("foreign: %d %s, random: %d %s; want identical 404s", foreign.Status, foreign.Body, random.Status, random.Body)
	}
	if r := eve.do("DELETE", "/api/auth/sessions/nope", nil); r.Status != 404 {
		t.Fatalf("malformed id: got %d, want 404", r.Status)
	}
	b.must(200, "GET", "/api/auth/me", nil)

	a.must(204, "DELETE", "/api/auth/sessions/"+theirs, nil)
	want401(t, "deleted session's token", b.do("GET", "/api/auth/me", nil))
	want401(t, "deleted session's refresh", b.do("POST", "/api/auth/refresh", nil))
	if r := a.do("DELETE", "/api/auth/sessions/"+theirs, nil); r.Status != 404 {
		t.Fatalf("deleting twice: got %d, want 404", r.Status)
	}
	if n := len(a.must(200, "GET", "/api/auth/sessions", nil).List()); n != 1 {
		t.Fatalf("sessions after delete: %d, want 1", n)
	}
	// Deleting the current session signs this client out.
	a.must(204, "DELETE", "/api/auth/sessions/"+mine, nil)
	want401(t, "own deleted session", a.do("GET", "/api/auth/me", nil))
}
