package confine

import "errors"

// The few string helpers the launcher needs, so that it imports neither
// strings nor strconv: both initialise late in the binary's order (they
// sort after most of the third-party packages), and waiting for them
// would put most of the binary's package initialisation back in front of
// the launcher. os already depends on everything used here.

func hasPrefix(s, prefix string) bool { return len(s) >= len(prefix) && s[:len(prefix)] == prefix }

func hasSuffix(s, suffix string) bool {
	return len(s) >= len(suffix) && s[len(s)-len(suffix):] == suffix
}

func trimSuffix(s, suffix string) string {
	if hasSuffix(s, suffix) {
		return s[:len(s)-len(suffix)]
	}
	return s
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// cut splits s around the first sep.
func cut(s string, sep byte) (before, after string, found bool) {
	if i := indexByte(s, sep); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}

// splitByte splits s at every sep.
func splitByte(s string, sep byte) []string {
	var out []string
	for {
		before, after, found := cut(s, sep)
		out = append(out, before)
		if !found {
			return out
		}
		s = after
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// atoi reads a non-negative decimal number, and nothing else.
func atoi(s string) (int, error) {
	if s == "" || len(s) > 9 {
		return 0, errors.New("not a small non-negative number: " + quote(s))
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, errors.New("not a small non-negative number: " + quote(s))
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, nil
}

// quote is s in double quotes, for messages.
func quote(s string) string { return `"` + s + `"` }

// splitFields splits s around runs of spaces, tabs and newlines.
func splitFields(s string) []string {
	var out []string
	start := -1
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' || s[i] == '\t' || s[i] == '\n' {
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	return out
}
