// Package webhook is the pure part of the inbound alert receiver
// (POST /api/webhooks/{task_id}, spec section 4.7): it verifies who sent a
// delivery, normalizes what the provider said into alerts, redacts the
// payload before storage and decides which routing rules fire. It does no
// I/O, keeps no state and never logs; the server owns HTTP, storage and
// dispatch.
//
// A handler uses it in this order:
//
//	body := read at most N bytes                      // 413 beyond
//	err := webhook.Verify(hook.Scheme, [][]byte{cur, prev}, r.Header, body, now)
//	                                                  // *Error, HTTPStatus() 401
//	stored, err := webhook.Redact(body, hook.RedactGlobs) // 422 if not JSON
//	ev, err := webhook.Parse(hook.Provider, r.Header, stored)
//	                                                  // *Error, HTTPStatus() 422
//	env := webhook.NewEnv(ev, stored, r.Header)
//	idx, evalErrs := webhook.SelectRules(specs, env)  // log evalErrs, dispatch rules[idx]
//
// Parsing and routing the redacted bytes, not the raw ones, means a replay
// of the stored event routes exactly like the live delivery did. Only
// Verify needs the raw body.
//
// On save, the server validates configuration with ParseScheme, ParseProvider,
// ValidateGlob and CompileCondition (all *Error with HTTPStatus() 422).
//
// Every error crossing the boundary is an *Error with a Code; errors.Is
// works against the Err* sentinels. Messages never contain secrets.
package webhook
