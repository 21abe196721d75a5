package confine

import (
	"errors"
	"os"
	"path"
	"slices"
	"syscall"
	"unsafe"
)

// Landlock access rights (uapi/linux/landlock.h), by the ABI that added
// them. Written out here rather than taken from golang.org/x/sys/unix (see
// the package comment); TestConstantsMatchXSysUnix checks every value.
const (
	llExecute    = 1 << 0
	llWriteFile  = 1 << 1
	llReadFile   = 1 << 2
	llReadDir    = 1 << 3
	llRemoveDir  = 1 << 4
	llRemoveFile = 1 << 5
	llMakeChar   = 1 << 6
	llMakeDir    = 1 << 7
	llMakeReg    = 1 << 8
	llMakeSock   = 1 << 9
	llMakeFifo   = 1 << 10
	llMakeBlock  = 1 << 11
	llMakeSym    = 1 << 12
	llRefer      = 1 << 13 // ABI 2
	llTruncate   = 1 << 14 // ABI 3

	llNetBindTCP    = 1 << 0 // ABI 4
	llNetConnectTCP = 1 << 1
	llScopeAbstract = 1 << 0 // ABI 6
	llScopeSignal   = 1 << 1

	llCreateRulesetVersion = 1 << 0
	llRulePathBeneath      = 1

	sysLandlockCreateRuleset = 444 // the same number on every architecture
	sysLandlockAddRule       = 445
	sysLandlockRestrictSelf  = 446

	oPath = 0x200000 // O_PATH

	llRead     = llReadFile | llReadDir
	llFileOnly = llExecute | llWriteFile | llReadFile | llTruncate
)

// fsRights is every filesystem right the ABI knows (IOCTL_DEV of ABI 5 is
// left unhandled: device ioctls are not what the profiles restrict).
func fsRights(abi int) uint64 {
	r := uint64(llExecute | llWriteFile | llReadFile | llReadDir | llRemoveDir | llRemoveFile | llMakeChar |
		llMakeDir | llMakeReg | llMakeSock | llMakeFifo | llMakeBlock | llMakeSym)
	if abi >= 2 {
		r |= llRefer
	}
	if abi >= 3 {
		r |= llTruncate
	}
	return r
}

// LandlockABI asks the kernel for its Landlock version (0: none).
func LandlockABI() int {
	v, _, errno := syscall.Syscall(sysLandlockCreateRuleset, 0, 0, llCreateRulesetVersion)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// execDirs are where the system's programs live: with NoExecNew they are
// the only executable places, and read-only.
var execDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/snap", "/nix"}

// hostStopPaths are files whose writing stops or reboots the host (or arms
// a watchdog that will): read-only under DenyHostStop.
// /proc/sys/kernel holds the host name, the sysrq mask, core_pattern (a
// pipe there runs as root) and the power-off command.
var hostStopPaths = []string{"/proc/sysrq-trigger", "/proc/sys/kernel", "/sys/power", "/sys/kernel", "/dev/watchdog", "/dev/watchdog0", "/sys/firmware"}

// grant is a path whose subtree gets exactly rights (deeper grants win).
type grant struct {
	path   string
	rights uint64
}

// fsPlan turns a profile into the subtree grants Landlock is given. The
// default for "/" comes from the switches; places that differ are grants.
func fsPlan(p Spec, abi int) (def uint64, grants []grant) {
	all := fsRights(abi)
	def = all
	if p.ReadOnly || len(p.WritePaths) > 0 {
		def = llRead | llExecute
	}
	strip := uint64(0)
	if p.NoDelete {
		strip |= llRemoveDir | llRemoveFile | llTruncate
	}
	if p.NoExecNew {
		strip |= llExecute
	}
	def &^= strip
	if !p.ReadOnly {
		for _, w := range p.WritePaths {
			grants = append(grants, grant{w, all &^ strip})
		}
	}
	if p.NoExecNew {
		for _, d := range execDirs {
			grants = append(grants, grant{d, llRead | llExecute})
		}
	}
	if p.DenyHostStop {
		for _, d := range hostStopPaths {
			grants = append(grants, grant{d, (llRead | llExecute) & def})
		}
	}
	for _, d := range p.DenyWritePaths {
		grants = append(grants, grant{d, (llRead | llExecute) & def})
	}
	if p.ReadOnly || len(p.WritePaths) > 0 {
		grants = append(grants, grant{"/dev/null", llReadFile | llWriteFile | llExecute | (all & llTruncate)})
	}
	if p.TempDir != "" {
		// The private temp dir: for a read-only command anything but
		// executing what is put there; for others what they may do
		// elsewhere, which needs no rule of its own when that is the
		// default (and then every command of the profile has the same
		// rules, which applyLandlock keeps built).
		r := all &^ strip
		if p.ReadOnly {
			r = all &^ llExecute
		}
		if r != def {
			grants = append(grants, grant{p.TempDir, r})
		}
	}
	return def, grants
}

// landlockRule is one path_beneath rule.
type landlockRule struct {
	path   string
	rights uint64
}

// planRules expands grants into path_beneath rules. Landlock only adds
// rights along a path (a rule on "/" covers everything beneath), so a
// grant that takes rights away is made by giving its ancestors only what
// every grant beneath them allows and their other entries the full default.
//
// listed are the directories it read to do so, as they were before it read
// them: the rules hold for as long as those are unchanged.
func planRules(def uint64, grants []grant) (rules []landlockRule, listed []dirStamp) {
	byPath := map[string]uint64{}
	for _, g := range grants {
		p := path.Clean(g.path)
		if !path.IsAbs(p) {
			continue
		}
		if r, ok := byPath[p]; ok {
			byPath[p] = r & g.rights // two grants on one path: the narrower
			continue
		}
		byPath[p] = g.rights
	}
	var walk func(dir string, rights uint64)
	walk = func(dir string, rights uint64) {
		// Is there a grant strictly beneath dir that lacks something rights has?
		narrower := rights
		needsSplit := false
		var beneath []string
		for p, r := range byPath {
			if p != dir && within(p, dir) {
				beneath = append(beneath, p)
				if lacks := rights &^ (r | dirOnly(p)); lacks != 0 {
					needsSplit = true
					narrower &^= lacks
				}
			}
		}
		if !needsSplit {
			rules = append(rules, landlockRule{dir, rights})
			slices.Sort(beneath)
			for _, p := range beneath {
				if !coveredByShallower(p, dir, byPath) {
					walk(p, byPath[p])
				}
			}
			return
		}
		if narrower != 0 {
			rules = append(rules, landlockRule{dir, narrower})
		}
		listed = append(listed, stampDir(dir))
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			if dir == "/proc" && e.Name()[0] >= '0' && e.Name()[0] <= '9' {
				continue // other processes' files: readable from above, not writable
			}
			child := path.Join(dir, e.Name())
			r, ok := byPath[child]
			if !ok {
				r = rights
			}
			walk(child, r)
		}
	}
	walk("/", def)
	return rules, listed
}

// dirOnly are the rights that mean nothing on a file: a file grant does not
// take them from its parent directory.
func dirOnly(file string) uint64 {
	if st, err := os.Stat(file); err == nil && st.IsDir() {
		return 0
	}
	return llReadDir | llRemoveDir | llRemoveFile | llMakeChar | llMakeDir | llMakeReg | llMakeSock | llMakeFifo |
		llMakeBlock | llMakeSym | llRefer
}

// coveredByShallower: p has a granted ancestor strictly between dir and p,
// which walks it.
func coveredByShallower(p, dir string, byPath map[string]uint64) bool {
	for q := path.Dir(p); q != dir && within(q, dir) && q != "/"; q = path.Dir(q) {
		if _, ok := byPath[q]; ok {
			return true
		}
	}
	return false
}

// applyLandlock restricts the calling thread (and what it execs).
func applyLandlock(p Spec) error {
	abi := p.LandlockABI
	if abi <= 0 {
		return nil
	}
	if root, ok := sharedTempRoot(p); ok {
		// Two layers, so that the large one is the same for every command:
		// the profile with the directory of all the private temp dirs in
		// place of this command's own (nothing executes beneath it), then
		// a small one that leaves writes to this command's temp dir and
		// /dev/null alone. Landlock allows what every layer allows.
		shared := p
		shared.TempDir = root
		if err := withRuleset(shared, abi, "", restrictSelf); err != nil {
			return err
		}
		return restrictWrites(abi, p.TempDir)
	}
	return withRuleset(p, abi, p.TempDir, restrictSelf)
}

func restrictSelf(fd int) error {
	if _, _, errno := syscall.Syscall(sysLandlockRestrictSelf, uintptr(fd), 0, 0); errno != 0 {
		return errors.New("landlock_restrict_self: " + errno.Error())
	}
	return nil
}

// sharedTempRoot is the directory that holds a read-only command's
// private temp dir, when it holds only such dirs (TempRoot).
func sharedTempRoot(p Spec) (string, bool) {
	if !p.ReadOnly || p.TempDir == "" {
		return "", false
	}
	root := path.Dir(path.Clean(p.TempDir))
	return root, path.Base(root) == TempRoot
}

// restrictWrites adds a layer that handles only the rights that change
// files, and grants them beneath dir and on /dev/null.
func restrictWrites(abi int, dir string) error {
	handled := fsRights(abi) &^ (llRead | llExecute)
	attr := struct{ fs uint64 }{handled}
	r, _, errno := syscall.Syscall(sysLandlockCreateRuleset, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return errors.New("landlock_create_ruleset: " + errno.Error())
	}
	fd := int(r)
	defer syscall.Close(fd)
	if err := addPathRule(fd, dir, handled); err != nil {
		return err
	}
	if err := addPathRule(fd, "/dev/null", handled&(llWriteFile|llTruncate)); err != nil {
		return err
	}
	return restrictSelf(fd)
}

// buildRuleset makes the Landlock ruleset of p: its handled rights and
// its rules.
func buildRuleset(p Spec, abi int, def uint64, grants []grant) (fd int, listed []dirStamp, err error) {
	handledFS := fsRights(abi)
	attr := struct{ fs, net, scoped uint64 }{fs: handledFS}
	size := unsafe.Sizeof(uint64(0))
	if abi >= 4 {
		size = 2 * unsafe.Sizeof(uint64(0))
		if p.NoNetwork {
			attr.net = llNetBindTCP | llNetConnectTCP
		}
	}
	if abi >= 6 {
		size = 3 * unsafe.Sizeof(uint64(0))
		if p.ScopeSignals {
			attr.scoped = llScopeSignal | llScopeAbstract
		}
	}
	r, _, errno := syscall.Syscall(sysLandlockCreateRuleset, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return -1, nil, errors.New("landlock_create_ruleset: " + errno.Error())
	}
	fd = int(r) // the kernel makes it close-on-exec
	rules, listed := planRules(def, grants)
	for _, r := range rules {
		if err := addPathRule(fd, r.path, r.rights&handledFS); err != nil {
			syscall.Close(fd)
			return -1, nil, err
		}
	}
	return fd, listed, nil
}

// addPathRule adds one path_beneath rule; a path that does not exist (or
// cannot be opened) simply gets no rule.
func addPathRule(ruleset int, file string, rights uint64) error {
	if rights == 0 {
		return nil
	}
	pfd, err := syscall.Open(file, oPath|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer syscall.Close(pfd)
	var st syscall.Stat_t
	if err := syscall.Fstat(pfd, &st); err == nil && st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		rights &= llFileOnly
	}
	// struct landlock_path_beneath_attr is packed: u64 then s32.
	var attr [12]byte
	*(*uint64)(unsafe.Pointer(&attr[0])) = rights
	*(*int32)(unsafe.Pointer(&attr[8])) = int32(pfd)
	if _, _, errno := syscall.Syscall6(sysLandlockAddRule, uintptr(ruleset), llRulePathBeneath,
		uintptr(unsafe.Pointer(&attr[0])), 0, 0, 0); errno != 0 {
		if errno == syscall.EBADFD {
			return nil // a pipe or socket behind /dev/stderr and the like: nothing to grant
		}
		return errors.New("landlock_add_rule " + file + ": " + errno.Error())
	}
	return nil
}

// Writable reports whether the profile lets a command write path (for
// naming what the sandbox refused).
func (p Spec) Writable(file string) bool {
	if p.LandlockABI == 0 {
		return true
	}
	def, grants := fsPlan(p, p.LandlockABI)
	rights, best := def, ""
	for _, g := range grants {
		gp := path.Clean(g.path)
		if within(file, gp) && len(gp) > len(best) {
			rights, best = g.rights, gp
		}
	}
	return rights&(llWriteFile|llMakeReg) != 0
}
