package shellscan

import "strings"

// optionSpelled reports whether arg can be the option an exclusion such as
// "-o*" or "--output*" names, in the spellings GNU getopt accepts beyond the
// plain one: a unique prefix of the long name (--ou=x, --outp x), the short
// letter inside a cluster of combined flags (-ro x, -uox), with its value
// attached or not. It is deliberately generous (-k1o counts as -o): it only
// takes lines off the read-only list, where an unknown spelling must count
// as unsafe.
func optionSpelled(excl, arg string) bool {
	name := strings.TrimSuffix(excl, "*")
	switch {
	case strings.HasPrefix(name, "--") && len(name) > 3 && strings.HasPrefix(arg, "--"):
		given, _, _ := strings.Cut(arg, "=")
		return len(given) >= 3 && strings.HasPrefix(name, given)
	case len(name) == 2 && name[0] == '-' && name[1] != '-' && len(arg) > 2 && arg[0] == '-' && arg[1] != '-':
		return strings.IndexByte(arg[1:], name[1]) >= 0
	}
	return false
}
