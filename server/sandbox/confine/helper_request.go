package confine

import "errors"

// HelperArg is the hidden subcommand of the helper process: `opsagent
// sandbox-helper`, with its end of a SOCK_SEQPACKET socket as fd 3. The
// helper is started once, in the private mount namespace the profiles that
// hide the system sockets need, and starts each of those commands from a
// thread of its own (see helperMain), so a command pays neither for a new
// namespace nor for starting the binary again.
const HelperArg = "sandbox-helper"

// HelperMaxRequest bounds one request to the helper. A larger one (a very
// long command line or environment) goes through the launcher instead.
const HelperMaxRequest = 96 << 10

const helperVersion = "opsagent-helper-1"

// HelperRequest is one command for the helper: what exec.Cmd would be
// given, and the profile's launcher words. Its three standard files travel
// beside it as SCM_RIGHTS.
type HelperRequest struct {
	Dir   string
	Words []string // the profile, as the launcher reads it (Parse)
	Argv  []string // Argv[0] is the program, looked up in Env's PATH
	Env   []string
}

// Encode is the request as one message: NUL-terminated strings, each list
// led by its length. No field can hold a NUL (argv and the environment
// cannot, and Parse's words come from argv), so nothing needs escaping.
func (r HelperRequest) Encode() []byte {
	var b []byte
	put := func(s string) { b = append(append(b, s...), 0) }
	list := func(l []string) {
		put(itoa(len(l)))
		for _, s := range l {
			put(s)
		}
	}
	put(helperVersion)
	put(r.Dir)
	list(r.Words)
	list(r.Argv)
	list(r.Env)
	return b
}

var errBadRequest = errors.New("the helper got a request it cannot read")

// decodeHelperRequest reads what Encode wrote, and refuses anything else.
func decodeHelperRequest(b []byte) (HelperRequest, error) {
	var r HelperRequest
	next := func() (string, bool) {
		i := indexByte(string(b), 0)
		if i < 0 {
			return "", false
		}
		s := string(b[:i])
		b = b[i+1:]
		return s, true
	}
	list := func() ([]string, bool) {
		ns, ok := next()
		n, err := atoi(ns)
		if !ok || err != nil || n > len(b) {
			return nil, false
		}
		l := make([]string, 0, n)
		for i := 0; i < n; i++ {
			s, ok := next()
			if !ok {
				return nil, false
			}
			l = append(l, s)
		}
		return l, true
	}
	v, ok := next()
	if !ok || v != helperVersion {
		return r, errBadRequest
	}
	var ok1, ok2, ok3, ok4 bool
	r.Dir, ok1 = next()
	r.Words, ok2 = list()
	r.Argv, ok3 = list()
	r.Env, ok4 = list()
	if !ok1 || !ok2 || !ok3 || !ok4 || len(b) != 0 || len(r.Argv) == 0 || r.Argv[0] == "" {
		return HelperRequest{}, errBadRequest
	}
	return r, nil
}
