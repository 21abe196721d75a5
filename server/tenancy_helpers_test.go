package server_test

import (
	"net/mail"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var mailedToken = regexp.MustCompile(`Token: (\S+)`)

// outboxToken returns the token of the newest mail to addr whose subject contains subject.
func (e *testEnv) outboxToken(t *testing.T, addr, subject string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(e.Dir, "outbox", "*.eml"))
	sort.Sort(sort.Reverse(sort.StringSlice(files)))
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		msg, err := mail.ReadMessage(fh)
		if err != nil {
			fh.Close()
			t.Fatal(err)
		}
		to := msg.Header.Get("To")
		subj := msg.Header.Get("Subject")
		if strings.Contains(to, addr) && strings.Contains(subj, subject) {
			var body strings.Builder
			buf := make([]byte, 1<<16)
			n, _ := msg.Body.Read(buf)
			body.Write(buf[:n])
			fh.Close()
			if m := mailedToken.FindStringSubmatch(body.String()); m != nil {
				return m[1]
			}
		}
		fh.Close()
	}
	t.Fatalf("no mail %q to %s in the outbox", subject, addr)
	return ""
}

// orgOf returns the current org id of c.
func orgOf(t *testing.T, c *client) string {
	t.Helper()
	return c.must(200, "GET", "/api/auth/me", nil).JSON()["current_org_id"].(string)
}

// invite makes admin invite email with role into orgID and returns the new
// member's client (a fresh account created through accept-invite), acting in orgID.
func (e *testEnv) invite(t *testing.T, admin *client, orgID, email, role string) *client {
	t.Helper()
	admin.must(201, "POST", "/api/organizations/"+orgID+"/invitations", map[string]any{"email": email, "role": role})
	tok := e.outboxToken(t, email, "invited")
	c := e.newClient()
	r := c.must(201, "POST", "/api/auth/accept-invite", map[string]any{"token": tok, "password": "correct horse battery", "name": strings.Split(email, "@")[0]})
	c.Token = r.JSON()["access_token"].(string)
	c.Email = email
	return c
}

// tenant is one org with a client per role.
type tenant struct {
	org     string
	owner   *client
	byRole  map[string]*client
	project string
}

// newTenant registers an owner and invites an admin, a member and a viewer.
func (e *testEnv) newTenant(t *testing.T, name string) *tenant {
	t.Helper()
	owner := e.register(name + "-owner@example.com")
	org := orgOf(t, owner)
	tn := &tenant{org: org, owner: owner, byRole: map[string]*client{"owner": owner}}
	for _, role := range []string{"admin", "member", "viewer"} {
		tn.byRole[role] = e.invite(t, owner, org, name+"-"+role+"@example.com", role)
	}
	tn.project = owner.must(201, "POST", "/api/projects", map[string]any{"name": name + " prod"}).JSON()["id"].(string)
	return tn
}

// userID returns the id of the signed-in user of c.
func userID(t *testing.T, c *client) string {
	t.Helper()
	return c.must(200, "GET", "/api/auth/me", nil).JSON()["id"].(string)
}

// apiKey creates a key as c and returns a client that sends it.
func (e *testEnv) apiKey(t *testing.T, c *client, body map[string]any) (*client, map[string]any) {
	t.Helper()
	r := c.must(201, "POST", "/api/api-keys", body).JSON()
	k := e.newClient()
	k.Token = r["key"].(string)
	return k, r
}

// refresh gets c a new access token with its refresh cookie (after the clock moved).
func (c *client) refresh() {
	c.env.t.Helper()
	c.Token = c.must(200, "POST", "/api/auth/refresh", nil).JSON()["access_token"].(string)
}
