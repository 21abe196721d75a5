package confine

import "os"

// init is the launcher. It runs before the packages that take the
// binary's start-up time are initialised (see the package comment), in
// every binary that links the sandbox, so a process started as
// `BINARY sandbox-exec ...` applies the profile and execs the command
// before any of the server's own code has run. So does the helper
// (`BINARY sandbox-helper`, see helperMain), which never needs the rest.
// Any other process passes straight through.
func init() {
	if len(os.Args) > 1 && os.Args[1] == Arg {
		os.Exit(Main(os.Args[2:]))
	}
	if len(os.Args) == 2 && os.Args[1] == HelperArg {
		os.Exit(helperMain())
	}
}

// Main is the launcher: the profile words, "--", the program and its
// arguments. Any failure to apply the profile stops here with exit 126:
// nothing runs unguarded.
func Main(args []string) int {
	sep := -1
	for i, a := range args {
		if a == "--" {
			sep = i
			break
		}
	}
	if sep < 0 || sep == len(args)-1 {
		os.Stderr.WriteString("usage: opsagent sandbox-exec PROFILE-WORD... -- PROGRAM [ARGS...]\n")
		return 2
	}
	s, err := Parse(args[:sep])
	if err != nil {
		os.Stderr.WriteString("opsagent sandbox: " + err.Error() + "\n")
		return 126
	}
	err = applyAndExec(s, args[sep+1], args[sep+2:])
	os.Stderr.WriteString("opsagent sandbox: the command did not run: " + err.Error() + "\n")
	return 126
}
