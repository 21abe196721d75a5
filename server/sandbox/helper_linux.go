package sandbox

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/opsagent/opsagent/server/sandbox/confine"
)

// The helper process (confine.HelperArg) starts the commands whose profile
// hides the system sockets: it sits in the private mount namespace such a
// profile needs, so those commands skip both the new namespace and a fresh
// start of the binary as the launcher (the larger part of their cost, and
// what grows most on a busy machine; BENCHMARKS.md "Command sandbox").
//
// It is started from one thread of this process kept for the purpose
// (forkerThread) and forks every command with CLONE_PARENT, so each
// command's parent is that thread: this process waits for it like any
// child, and the thread never ends, so neither the helper's parent-death
// signal nor a command's own PR_SET_PDEATHSIG fires while the server runs.
var helper struct {
	mu      sync.Mutex // held from request to reply: one request at a time
	sock    int        // this end of the helper's socket; 0 when none
	pid     int
	binary  string
	reply   []byte
	running map[int]bool // commands started through a helper, not yet waited for
	helpers map[int]bool // helpers started and not yet reaped
}

// helperTimeout bounds one request: a helper that does not answer in time
// is killed, and the command goes through the launcher.
const helperTimeout = 10 * time.Second

var forker struct {
	once sync.Once
	tid  int
	jobs chan func()
}

// forkerThread runs f on the thread kept for starting helpers (see above).
func forkerThread(f func()) {
	forker.once.Do(func() {
		forker.jobs = make(chan func())
		ready := make(chan int)
		go func() {
			runtime.LockOSThread() // never unlocked: it is the parent of every helper and command
			ready <- syscall.Gettid()
			for job := range forker.jobs {
				job()
			}
		}()
		forker.tid = <-ready
	})
	done := make(chan struct{})
	forker.jobs <- func() { f(); close(done) }
	<-done
}

// helperStart asks the helper to start the command r with stdio as its
// standard files. started is false when the helper cannot be used at all
// (it cannot be started, or it broke): the caller then uses the launcher,
// and nothing was forked. Otherwise err is the command's own failure to
// start, and nothing is left behind.
func helperStart(binary string, attr *syscall.SysProcAttr, r confine.HelperRequest, stdio [3]int) (pid int, started bool, err error) {
	msg := r.Encode()
	if len(msg) > confine.HelperMaxRequest {
		return 0, false, nil
	}
	helper.mu.Lock()
	defer helper.mu.Unlock()
	for attempt := 0; attempt < 2; attempt++ {
		if helper.sock == 0 || helper.binary != binary {
			if err := startHelper(binary, attr); err != nil {
				return 0, false, nil
			}
		}
		if err := syscall.Sendmsg(helper.sock, msg, syscall.UnixRights(stdio[:]...), nil, syscall.MSG_NOSIGNAL); err != nil {
			stopHelper() // it had died: the request never reached it, so it is safe to send again
			continue
		}
		reply, ok := helperReply()
		if !ok {
			// It died or hung with the request in hand: whatever it may
			// have started is stopped, and nothing is tried twice.
			stopHelper()
			reapStrays(true)
			return 0, true, errors.New("the sandbox helper stopped before it answered; the command was stopped and not run again")
		}
		return parseHelperReply(reply)
	}
	return 0, false, nil
}

func helperReply() (string, bool) {
	for {
		n, _, err := syscall.Recvfrom(helper.sock, helper.reply, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return "", false
		}
		return string(helper.reply[:n]), true
	}
}

func parseHelperReply(reply string) (int, bool, error) {
	kind, rest, _ := strings.Cut(reply, " ")
	switch kind {
	case "ok":
		pid, err := strconv.Atoi(rest)
		if err != nil || pid <= 0 {
			return 0, true, errors.New("sandbox: the helper answered " + strconv.Quote(reply))
		}
		helper.running[pid] = true
		return pid, true, nil
	case "errno":
		n, how, _ := strings.Cut(rest, " ")
		code, _ := strconv.Atoi(n)
		if how == "forked" {
			reapStrays(false)
		}
		return 0, true, syscall.Errno(code)
	case "apply":
		return 0, true, errors.New("the sandbox could not be applied (" + rest + "); the command did not run")
	}
	return 0, true, errors.New("sandbox: the helper refused the command: " + rest)
}

// startHelper starts the helper on the forker thread, in the namespaces
// attr asks for, with its socket as fd 3. Called with helper.mu held.
func startHelper(binary string, attr *syscall.SysProcAttr) error {
	stopHelper()
	if helper.running == nil {
		helper.running, helper.helpers, helper.reply = map[int]bool{}, map[int]bool{}, make([]byte, 4096)
	}
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	tv := syscall.NsecToTimeval(int64(helperTimeout))
	_ = syscall.SetsockoptTimeval(fds[0], syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv)
	_ = syscall.SetsockoptTimeval(fds[0], syscall.SOL_SOCKET, syscall.SO_SNDTIMEO, &tv)
	child := os.NewFile(uintptr(fds[1]), "sandbox-helper")
	defer child.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		syscall.Close(fds[0])
		return err
	}
	defer devnull.Close()
	sys := *attr
	sys.Pdeathsig = syscall.SIGKILL
	var p *os.Process
	forkerThread(func() {
		// An empty environment: the helper needs none, and each command
		// brings its own.
		p, err = os.StartProcess(binary, []string{binary, confine.HelperArg}, &os.ProcAttr{
			Env: []string{}, Files: []*os.File{devnull, devnull, os.Stderr, child}, Sys: &sys})
	})
	if err != nil {
		syscall.Close(fds[0])
		return err
	}
	helper.sock, helper.pid, helper.binary = fds[0], p.Pid, binary
	helper.helpers[p.Pid] = true
	go func() {
		_, _ = p.Wait()
		helper.mu.Lock()
		delete(helper.helpers, p.Pid)
		helper.mu.Unlock()
	}()
	return nil
}

// stopHelper closes the socket (a healthy helper then exits) and kills the
// helper, in case it hung. Called with helper.mu held.
func stopHelper() {
	if helper.sock == 0 {
		return
	}
	syscall.Close(helper.sock)
	_ = syscall.Kill(helper.pid, syscall.SIGKILL)
	helper.sock, helper.pid = 0, 0
}

// helperDone is called once a command started through the helper has been
// waited for.
func helperDone(pid int) {
	helper.mu.Lock()
	delete(helper.running, pid)
	helper.mu.Unlock()
}

// reapStrays waits for the children a failed start left behind: children
// of the forker thread that are neither a helper nor a command that was
// handed over (requests are one at a time, so only the request just made
// can have left one). After a failed exec that is a child about to exit;
// after a helper died mid-request it may be a command that started, which
// kill stops first. /proc/PID/task/TID/children lists a thread's children.
// Called with helper.mu held.
func reapStrays(kill bool) {
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(forker.tid) + "/children")
	if err != nil {
		return // a kernel without CONFIG_PROC_CHILDREN: a stray stays a zombie until we exit
	}
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil || helper.running[pid] || helper.helpers[pid] {
			continue
		}
		if kill {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		go func() {
			var ws syscall.WaitStatus
			for {
				if _, err := syscall.Wait4(pid, &ws, 0, nil); err != syscall.EINTR {
					return
				}
			}
		}()
	}
}
