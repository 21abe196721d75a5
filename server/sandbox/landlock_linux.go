package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock access rights (uapi/linux/landlock.h), by the ABI that added them.
const (
	llExecute    = unix.LANDLOCK_ACCESS_FS_EXECUTE
	llWriteFile  = unix.LANDLOCK_ACCESS_FS_WRITE_FILE
	llReadFile   = unix.LANDLOCK_ACCESS_FS_READ_FILE
	llReadDir    = unix.LANDLOCK_ACCESS_FS_READ_DIR
	llRemoveDir  = unix.LANDLOCK_ACCESS_FS_REMOVE_DIR
	llRemoveFile = unix.LANDLOCK_ACCESS_FS_REMOVE_FILE
	llMakeChar   = unix.LANDLOCK_ACCESS_FS_MAKE_CHAR
	llMakeDir    = unix.LANDLOCK_ACCESS_FS_MAKE_DIR
	llMakeReg    = unix.LANDLOCK_ACCESS_FS_MAKE_REG
	llMakeSock   = unix.LANDLOCK_ACCESS_FS_MAKE_SOCK
	llMakeFifo   = unix.LANDLOCK_ACCESS_FS_MAKE_FIFO
	llMakeBlock  = unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK
	llMakeSym    = unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	llRefer      = unix.LANDLOCK_ACCESS_FS_REFER    // ABI 2
	llTruncate   = unix.LANDLOCK_ACCESS_FS_TRUNCATE // ABI 3

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

// landlockABI asks the kernel for its Landlock version (0: none).
func landlockABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
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
func fsPlan(p Profile, abi int) (def uint64, grants []grant) {
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
		// The private temp dir: anything but executing what is put there.
		grants = append(grants, grant{p.TempDir, all &^ llExecute})
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
func planRules(def uint64, grants []grant) []landlockRule {
	byPath := map[string]uint64{}
	for _, g := range grants {
		p := filepath.Clean(g.path)
		if !filepath.IsAbs(p) {
			continue
		}
		if r, ok := byPath[p]; ok {
			byPath[p] = r & g.rights // two grants on one path: the narrower
			continue
		}
		byPath[p] = g.rights
	}
	var rules []landlockRule
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
			sort.Strings(beneath)
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
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			if dir == "/proc" && e.Name()[0] >= '0' && e.Name()[0] <= '9' {
				continue // other processes' files: readable from above, not writable
			}
			child := filepath.Join(dir, e.Name())
			r, ok := byPath[child]
			if !ok {
				r = rights
			}
			walk(child, r)
		}
	}
	walk("/", def)
	return rules
}

// dirOnly are the rights that mean nothing on a file: a file grant does not
// take them from its parent directory.
func dirOnly(path string) uint64 {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return 0
	}
	return llReadDir | llRemoveDir | llRemoveFile | llMakeChar | llMakeDir | llMakeReg | llMakeSock | llMakeFifo |
		llMakeBlock | llMakeSym | llRefer
}

// coveredByShallower: p has a granted ancestor strictly between dir and p,
// which walks it.
func coveredByShallower(p, dir string, byPath map[string]uint64) bool {
	for q := filepath.Dir(p); q != dir && within(q, dir) && q != "/"; q = filepath.Dir(q) {
		if _, ok := byPath[q]; ok {
			return true
		}
	}
	return false
}

// applyLandlock restricts the calling thread (and what it execs).
func applyLandlock(p Profile) error {
	abi := p.LandlockABI
	if abi <= 0 {
		return nil
	}
	handledFS := fsRights(abi)
	attr := struct{ fs, net, scoped uint64 }{fs: handledFS}
	size := unsafe.Sizeof(uint64(0))
	if abi >= 4 {
		size = 2 * unsafe.Sizeof(uint64(0))
		if p.NoNetwork {
			attr.net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
		}
	}
	if abi >= 6 {
		size = 3 * unsafe.Sizeof(uint64(0))
		if p.ScopeSignals {
			attr.scoped = unix.LANDLOCK_SCOPE_SIGNAL | unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
		}
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return fmt.Errorf("landlock_create_ruleset: %v", errno)
	}
	defer unix.Close(int(fd))
	def, grants := fsPlan(p, abi)
	for _, r := range planRules(def, grants) {
		if err := addPathRule(int(fd), r.path, r.rights&handledFS); err != nil {
			return err
		}
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return fmt.Errorf("landlock_restrict_self: %v", errno)
	}
	return nil
}

// addPathRule adds one path_beneath rule; a path that does not exist (or
// cannot be opened) simply gets no rule.
func addPathRule(ruleset int, path string, rights uint64) error {
	if rights == 0 {
		return nil
	}
	pfd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
		rights &= llFileOnly
	}
	// struct landlock_path_beneath_attr is packed: u64 then s32.
	var attr [12]byte
	*(*uint64)(unsafe.Pointer(&attr[0])) = rights
	*(*int32)(unsafe.Pointer(&attr[8])) = int32(pfd)
	if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH,
		uintptr(unsafe.Pointer(&attr[0])), 0, 0, 0); errno != 0 {
		if errno == unix.EBADFD {
			return nil // a pipe or socket behind /dev/stderr and the like: nothing to grant
		}
		return fmt.Errorf("landlock_add_rule %s: %v", path, errno)
	}
	return nil
}

// writable reports whether the profile lets a command write path (for
// naming what the sandbox refused).
func (p Profile) writable(path string) bool {
	if p.LandlockABI == 0 {
		return true
	}
	def, grants := fsPlan(p, p.LandlockABI)
	rights, best := def, ""
	for _, g := range grants {
		gp := filepath.Clean(g.path)
		if within(path, gp) && len(gp) > len(best) {
			rights, best = g.rights, gp
		}
	}
	return rights&(llWriteFile|llMakeReg) != 0
}
