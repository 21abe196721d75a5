package confine

import (
	"sync"
	"syscall"
	"time"
)

// Building a profile's Landlock ruleset is most of what applying it costs:
// a profile that keeps the host-stopping files read-only is some 200 rules
// (/proc, /proc/sys, /sys and /dev are split around those files), each an
// open, a stat and a landlock_add_rule, about 2 ms in all. Most profiles
// have the same rules for every command (fsPlan gives the private temp
// dir a rule of its own only where it differs from the default), so their
// ruleset is built once and each thread is restricted with it
// (landlock_restrict_self copies the ruleset into the thread's own
// domain). A kept ruleset is rebuilt when a directory its rules were read
// from has changed (an entry added, removed or renamed changes the
// directory's mtime), and at the latest after rulesetMaxAge, so it never
// grants more than planning afresh would.
var rulesets struct {
	sync.Mutex
	byKey map[string]*builtRuleset
}

type builtRuleset struct {
	fd     int
	listed []dirStamp
	built  time.Time
}

const (
	rulesetMaxAge = time.Minute
	rulesetsKept  = 32
)

// dirStamp is a directory as it was when planRules read it.
type dirStamp struct {
	path         string
	dev, ino     uint64
	mtime, ctime int64
	exists       bool
}

func stampDir(dir string) dirStamp {
	var st syscall.Stat_t
	if syscall.Stat(dir, &st) != nil {
		return dirStamp{path: dir}
	}
	return dirStamp{dir, uint64(st.Dev), st.Ino, st.Mtim.Nano(), st.Ctim.Nano(), true}
}

func (r *builtRuleset) current() bool {
	if time.Since(r.built) > rulesetMaxAge {
		return false
	}
	for _, d := range r.listed {
		if stampDir(d.path) != d {
			return false
		}
	}
	return true
}

// withRuleset calls use with p's ruleset, kept or built for the call (it
// is kept unless it has a rule for own, a path of this command's own). The
// lock is held while a kept one is in use, so it is never closed under a
// thread that is being restricted with it.
func withRuleset(p Spec, abi int, own string, use func(fd int) error) error {
	def, grants := fsPlan(p, abi)
	key, keep := rulesetKey(p, abi, def, grants, own)
	if keep {
		rulesets.Lock()
		if r := rulesets.byKey[key]; r != nil && r.current() {
			defer rulesets.Unlock()
			return use(r.fd)
		}
		rulesets.Unlock()
	}
	built := time.Now()
	fd, listed, err := buildRuleset(p, abi, def, grants)
	if err != nil {
		return err
	}
	if !keep {
		defer syscall.Close(fd)
		return use(fd)
	}
	rulesets.Lock()
	defer rulesets.Unlock()
	if rulesets.byKey == nil {
		rulesets.byKey = map[string]*builtRuleset{}
	}
	if old := rulesets.byKey[key]; old != nil {
		syscall.Close(old.fd)
	} else if len(rulesets.byKey) >= rulesetsKept {
		for k, r := range rulesets.byKey { // any one: profiles are few
			syscall.Close(r.fd)
			delete(rulesets.byKey, k)
			break
		}
	}
	rulesets.byKey[key] = &builtRuleset{fd: fd, listed: listed, built: built}
	return use(fd)
}

// rulesetKey names a ruleset by everything it is built from; keep is false
// when one of its rules is for own.
func rulesetKey(p Spec, abi int, def uint64, grants []grant, own string) (key string, keep bool) {
	b := []byte(itoa(abi) + " " + itoa(int(def)))
	if p.NoNetwork {
		b = append(b, " net"...)
	}
	if p.ScopeSignals {
		b = append(b, " scoped"...)
	}
	for _, g := range grants {
		if own != "" && g.path == own {
			return "", false
		}
		b = append(append(append(append(b, 0), g.path...), 0), itoa(int(g.rights))...)
	}
	return string(b), true
}
