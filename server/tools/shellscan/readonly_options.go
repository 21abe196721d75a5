package shellscan

import "strings"

// optionsVerdict reads a command that a built-in read-only pattern matched
// with its program's option table: empty when every option is known and
// none writes, runs a program or changes the host.
func optionsVerdict(c *Command) optVerdict {
	switch c.Name {
	case "ip":
		return ipVerdict(c)
	case "find":
		return findVerdict(c)
	}
	if t := optTables[c.Name]; t != nil {
		return t.check(c)
	}
	return ""
}

// ip's global options, in the order ip tries them: a word names the first
// one it is a prefix of, with one dash or two (ip -b, ip --batch, ip -ba).
var ipGlobals = []struct {
	name  string
	value bool
	why   string
}{
	{"-batch", true, "reads ip commands from a file, which can change anything"}, {"-family", true, ""},
	{"-force", false, "goes on past the errors of a batch"}, {"-loops", true, ""}, {"-4", false, ""}, {"-6", false, ""}, {"-0", false, ""}, {"-B", false, ""}, {"-M", false, ""},
	{"-human", false, ""}, {"-iec", false, ""}, {"-stats", false, ""}, {"-statistics", false, ""}, {"-details", false, ""},
	{"-resolve", false, ""}, {"-oneline", false, ""}, {"-timestamp", false, ""}, {"-tshort", false, ""}, {"-json", false, ""},
	{"-pretty", false, ""}, {"-brief", false, ""}, {"-all", false, ""}, {"-Numeric", false, ""}, {"-color", false, ""},
	{"-Version", false, ""}, {"-help", false, ""}, {"-netns", true, ""}, {"-rcvbuf", true, ""}, {"-echo", false, ""},
}

// ipObjects in the order ip matches an abbreviation against them.
var ipObjects = []string{"address", "addrlabel", "maddress", "route", "rule", "neighbor", "neighbour", "ntable", "ntbl", "link",
	"l2tp", "fou", "ila", "macsec", "tunnel", "tunl", "tuntap", "tap", "token", "tcpmetrics", "tcp_metrics", "monitor", "xfrm",
	"mroute", "mrule", "netns", "netconf", "vrf", "sr", "nexthop", "mptcp", "ioam", "stats", "help"}

// ipReading are the objects whose show/list/get verbs only read.
var ipReading = map[string]bool{"address": true, "addrlabel": true, "maddress": true, "route": true, "rule": true,
	"neighbor": true, "neighbour": true, "ntable": true, "ntbl": true, "link": true, "tunnel": true, "tunl": true,
	"tuntap": true, "tap": true, "token": true, "mroute": true, "mrule": true, "netns": true, "netconf": true, "vrf": true,
	"nexthop": true, "stats": true, "help": true}

// ipWriting are verbs that change state; a verb that abbreviates one of
// them is not read, even where ip would read it as show.
var ipWriting = []string{"add", "append", "prepend", "change", "chg", "replace", "delete", "del", "set", "flush", "save",
	"restore", "exec", "attach", "identify-add", "test", "update", "monitor", "reset", "reinit"}

func ipVerdict(c *Command) optVerdict {
	i := 0
	for ; i < len(c.Args); i++ {
		a := c.Args[i]
		if !c.ArgLiteral(i) {
			return optVerdict("argument " + a + " of ip is known only at run time (it may be -batch FILE or a verb that changes the network)")
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		w := a
		if strings.HasPrefix(w, "--") {
			w = w[1:]
		}
		w, _, _ = strings.Cut(w, "=")
		found := false
		for _, g := range ipGlobals {
			if len(w) < 2 || !strings.HasPrefix(g.name, w) {
				continue
			}
			if g.why != "" {
				return optVerdict("ip " + a + " (" + g.name + ") " + g.why)
			}
			if g.value && !strings.Contains(a, "=") {
				i++
			}
			found = true
			break
		}
		if !found {
			return optVerdict("unknown option " + a + " of ip: not known to be read-only")
		}
	}
	if i >= len(c.Args) {
		return ""
	}
	obj := ""
	for _, o := range ipObjects {
		if strings.HasPrefix(o, c.Args[i]) {
			obj = o
			break
		}
	}
	if !ipReading[obj] {
		return optVerdict("ip " + c.Args[i] + " is not one of ip's objects known to be read-only")
	}
	if i+1 >= len(c.Args) {
		return ""
	}
	verb := c.Args[i+1]
	if !c.ArgLiteral(i + 1) {
		return optVerdict("the verb of ip " + obj + " is known only at run time (" + verb + ")")
	}
	for _, v := range ipWriting {
		if strings.HasPrefix(v, verb) {
			why := "changes the network"
			if obj == "netns" && v == "exec" {
				why = "runs a program"
			}
			return optVerdict("ip " + obj + " " + verb + " (" + v + ") " + why)
		}
	}
	for _, v := range []string{"show", "list", "lst", "get", "help", "identify", "pids", "list-id"} {
		if strings.HasPrefix(v, verb) || strings.HasPrefix(verb, "-") {
			return ""
		}
	}
	if obj == "netns" {
		return optVerdict("ip netns " + verb + " is not known to be read-only")
	}
	// ip address dev eth0: a selector without a verb shows.
	return ""
}

// find's primaries and how many arguments each takes; the marked ones
// run programs, delete or write files.
var findPrimaries = map[string]int{
	"-name": 1, "-iname": 1, "-path": 1, "-ipath": 1, "-wholename": 1, "-iwholename": 1, "-regex": 1, "-iregex": 1,
	"-regextype": 1, "-type": 1, "-xtype": 1, "-size": 1, "-perm": 1, "-user": 1, "-group": 1, "-uid": 1, "-gid": 1,
	"-newer": 1, "-anewer": 1, "-cnewer": 1, "-mtime": 1, "-atime": 1, "-ctime": 1, "-mmin": 1, "-amin": 1, "-cmin": 1,
	"-used": 1, "-links": 1, "-inum": 1, "-samefile": 1, "-lname": 1, "-ilname": 1, "-fstype": 1, "-context": 1,
	"-maxdepth": 1, "-mindepth": 1, "-printf": 1, "-files0-from": 1,
	"-print": 0, "-print0": 0, "-ls": 0, "-prune": 0, "-quit": 0, "-true": 0, "-false": 0, "-empty": 0, "-executable": 0,
	"-readable": 0, "-writable": 0, "-nouser": 0, "-nogroup": 0, "-not": 0, "-and": 0, "-a": 0, "-or": 0, "-o": 0,
	"-depth": 0, "-d": 0, "-mount": 0, "-xdev": 0, "-noleaf": 0, "-daystart": 0, "-follow": 0, "-ignore_readdir_race": 0,
	"-noignore_readdir_race": 0, "-warn": 0, "-nowarn": 0, "-help": 0, "--help": 0, "-version": 0, "--version": 0,
}

var findUnsafe = map[string]string{"-exec": "runs a program", "-execdir": "runs a program", "-ok": "runs a program",
	"-okdir": "runs a program", "-delete": "deletes files", "-fprint": "writes files", "-fprint0": "writes files",
	"-fprintf": "writes files", "-fls": "writes files"}

func findVerdict(c *Command) optVerdict {
	i := 0
	for ; i < len(c.Args) && c.ArgLiteral(i); i++ { // -H -L -P -D opts -Olevel
		a := c.Args[i]
		if a == "-H" || a == "-L" || a == "-P" || strings.HasPrefix(a, "-O") && len(a) > 2 {
			continue
		}
		if a == "-D" {
			i++
			continue
		}
		break
	}
	for ; i < len(c.Args); i++ {
		a := c.Args[i]
		if !c.ArgLiteral(i) {
			return optVerdict("argument " + a + " of find is known only at run time and may be -exec or -delete")
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue // a starting point, or ( ) ! ,
		}
		if why, bad := findUnsafe[a]; bad {
			return optVerdict("find " + a + " " + why)
		}
		n, ok := findPrimaries[a]
		if !ok && len(a) >= 8 && strings.HasPrefix(a, "-newer") {
			n, ok = 1, true // -newerXY
		}
		if !ok {
			return optVerdict("unknown option " + a + " of find: not known to be read-only")
		}
		i += n
	}
	return ""
}
