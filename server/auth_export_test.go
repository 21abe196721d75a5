package server

import "time"

// Test-only doors into the server, for tests of package server_test that need
// what no route offers yet.

// IssueTokenForTest signs a token of any type with the server's own signer
// (MFA tokens used as access tokens, for instance).
func IssueTokenForTest(s *Server, typ, subject, session, org string, ttl time.Duration) string {
	tok, _, err := s.signer.Issue(typ, subject, session, org, s.Now(), ttl)
	if err != nil {
		panic(err)
	}
	return tok
}

// AddRouteForTest adds a route to the table and rebuilds the handler; call it
// before Serve.
func AddRouteForTest(s *Server, rt *Route) {
	s.routes = append(s.routes, rt)
	s.handler = s.buildHandler()
}

// WaitBackgroundForTest waits for the work requests handed off after their
// answer (mail), so a test can read the outbox.
func WaitBackgroundForTest(s *Server) { s.bg.Wait() }
