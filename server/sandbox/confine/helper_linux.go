package confine

import (
	"os"
	"runtime"
	"syscall"
)

// helperSocket is the helper's end of its socket to the server.
const helperSocket = 3

// helperMain serves requests until the server closes its end (or dies: the
// server starts the helper with a parent-death signal). It was started in
// a private mount namespace (in a user namespace of the server's own uid
// where the server is not root), so it hides the system sockets once, for
// every command it will start. Requests come one at a time: the server
// holds a lock from request to reply.
//
// Each command is forked with CLONE_PARENT, so it is the server's child,
// not the helper's: the server waits for it as for any child (a real exit
// status), kills its process group on a timeout, and keeps it if the
// helper dies.
func helperMain() int {
	hideSystemSockets()
	buf := make([]byte, HelperMaxRequest+1)
	oob := make([]byte, syscall.CmsgSpace(3*4))
	for {
		n, oobn, flags, _, err := syscall.Recvmsg(helperSocket, buf, oob, syscall.MSG_CMSG_CLOEXEC)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n == 0 && oobn == 0 {
			return 0 // the server has gone
		}
		files := receivedFiles(oob[:oobn])
		reply := "bad the request was cut short"
		if flags&(syscall.MSG_TRUNC|syscall.MSG_CTRUNC) == 0 && len(files) == 3 {
			reply = serveHelperRequest(buf[:n], files)
		}
		for _, fd := range files {
			syscall.Close(fd)
		}
		if err := syscall.Sendmsg(helperSocket, []byte(reply), nil, nil, syscall.MSG_NOSIGNAL); err != nil {
			return 0
		}
	}
}

func receivedFiles(oob []byte) []int {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for i := range msgs {
		if got, err := syscall.ParseUnixRights(&msgs[i]); err == nil {
			fds = append(fds, got...)
		}
	}
	return fds
}

// serveHelperRequest answers one request with one of:
//
//	ok PID             the command started
//	errno N unforked   it could not start and nothing was forked
//	errno N forked     exec failed after the fork (the server reaps the child)
//	apply MESSAGE      the profile could not be applied: nothing ran
//	bad MESSAGE        the request could not be read
//
// What can be checked before the fork is (the program, the directory), so
// that a failed exec, which leaves a child the server must find, is rare.
func serveHelperRequest(msg []byte, files []int) string {
	r, err := decodeHelperRequest(msg)
	if err != nil {
		return "bad " + err.Error()
	}
	s, err := Parse(r.Words)
	if err != nil {
		return "apply " + err.Error()
	}
	path, err := lookPath(r.Argv[0], envValue(r.Env, "PATH"))
	if err != nil {
		return "errno " + itoa(int(syscall.ENOENT)) + " unforked"
	}
	if errno := executable(path); errno != 0 {
		return "errno " + itoa(int(errno)) + " unforked"
	}
	if r.Dir != "" {
		if st, err := os.Stat(r.Dir); err != nil || !st.IsDir() {
			return "errno " + itoa(int(syscall.ENOTDIR)) + " unforked"
		}
	}
	done := make(chan string, 1)
	go startFromOwnThread(s, path, r, files, done)
	return <-done
}

// startFromOwnThread applies s to a thread of its own and forks the
// command from it; the command inherits the thread's no_new_privs,
// Landlock domain and seccomp filter. The goroutine returns without
// unlocking, so the runtime ends the restricted thread with it (the
// command's parent is the server, so nothing waits on this thread). On
// the main thread, which cannot end, it holds that thread and leaves the
// work to another goroutine, as sandbox.startConfined does.
func startFromOwnThread(s Spec, path string, r HelperRequest, files []int, done chan<- string) {
	runtime.LockOSThread()
	if syscall.Gettid() == syscall.Getpid() {
		inner := make(chan string, 1)
		go startFromOwnThread(s, path, r, files, inner)
		done <- <-inner
		runtime.UnlockOSThread()
		return
	}
	if err := Apply(s); err != nil {
		done <- "apply " + err.Error()
		return
	}
	pid, err := syscall.ForkExec(path, r.Argv, &syscall.ProcAttr{
		Dir:   r.Dir,
		Env:   r.Env,
		Files: []uintptr{uintptr(files[0]), uintptr(files[1]), uintptr(files[2])},
		Sys:   &syscall.SysProcAttr{Setpgid: true, Cloneflags: syscall.CLONE_PARENT},
	})
	if err != nil {
		errno, _ := err.(syscall.Errno)
		done <- "errno " + itoa(int(errno)) + " forked"
		return
	}
	done <- "ok " + itoa(pid)
}

// executable is 0 for a regular file with an execute bit, else the errno
// execve would most likely give.
func executable(path string) syscall.Errno {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		errno, _ := err.(syscall.Errno)
		return errno
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Mode&0o111 == 0 {
		return syscall.EACCES
	}
	return 0
}

func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := cut(env[i], '='); ok && k == key {
			return v
		}
	}
	return ""
}
