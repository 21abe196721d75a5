package shellscan

import "strings"

// killChecksOwnShell: kill -0 $$ sends no signal; it only asks whether the
// shell's own process exists, so it stops nothing. Signal 0 to any other
// pid (kill -0 1 probes init, kill -0 -1 every process) and real signals
// keep the catalog's verdict.
func killChecksOwnShell(c *Command) bool {
	if c.Name != "kill" || len(c.Args) < 2 {
		return false
	}
	i := 0
	switch a := c.Args[0]; {
	case !c.ArgLiteral(0):
		return false
	case a == "-0" || a == "-SIG0" || a == "-s0" || a == "-n0" || a == "--signal=0":
		i = 1
	case (a == "-s" || a == "-n" || a == "--signal") && c.ArgLiteral(1) && (c.Args[1] == "0" || c.Args[1] == "SIG0"):
		i = 2
	default:
		return false
	}
	if i < len(c.Args) && c.ArgLiteral(i) && c.Args[i] == "--" {
		i++
	}
	if i >= len(c.Args) {
		return false
	}
	for ; i < len(c.Args); i++ {
		if c.ArgLiteral(i) {
			return false
		}
		switch strings.Trim(c.Args[i], `"`) {
		case "$$", "${$}", "$BASHPID", "${BASHPID}":
		default:
			return false
		}
	}
	return true
}
