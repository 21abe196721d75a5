package shellscan

import (
	"sort"
	"strings"
)

// An option table lists every option a read-only program accepts, as its
// manual does, and marks the ones that write, execute or stop something.
// A command on the built-in read-only list is read-only only when each of
// its options is in its program's table and none is marked: an option the
// table does not know counts as unsafe, so a new or misspelled option asks
// a person instead of being allowed silently.
//
// Tables are written as space-separated tokens:
//
//	-x           a short option without a value
//	-x=          a short option that takes a value (-xVALUE, -x VALUE)
//	-x?          a short option with an optional value, attached only (-xVALUE)
//	--name       a long option without a value
//	--name=      a long option that takes a value (--name=V, --name V)
//	--name?      a long option with an optional value, as --name=V only
//	--name==     a long option that takes two values (jq --arg NAME VALUE)
//	TOKEN!w      the option writes files (also !x: runs a program; !s: changes the host;
//	             !c: changes the system's state)
//
// Long options match as GNU getopt matches them: exactly, or by a prefix
// that names one option only (--ou for --output). Short options combine
// (-rn, -ro FILE, -roFILE). Options may follow operands (GNU permutation;
// for a program that stops at its first operand this reads more words as
// options than it does, which only refuses more); "--" ends them.
type optTable struct {
	short     map[byte]optKind
	long      map[string]optKind
	longNames []string // sorted, for prefix lookups
	unsafe    map[string]string
	// digits: -NUM is an option (head -5, grep -3).
	digits bool
	// dashLong: options are single-dash words (-type=mx, -netns x),
	// matched exactly or by a unique prefix; no combining.
	dashLong bool
	// bsd: a word without a dash is a cluster of BSD options (ps aux).
	bsd *optTable
	// plus: options may also start with + (lsof +D DIR).
	plus bool
}

type optKind uint8

const (
	optFlag optKind = iota
	optValue
	optMaybe // optional value, attached only
	optTwo   // two values
)

var effectWords = map[string]string{"w": "writes files", "x": "runs a program", "s": "changes the host",
	"c": "changes the system's state"}

// table compiles a table's tokens; a malformed token is a programming
// error caught by the package's tests (init panics).
func table(spec string) *optTable {
	t := &optTable{short: map[byte]optKind{}, long: map[string]optKind{}, unsafe: map[string]string{}}
	for _, tok := range strings.Fields(spec) {
		name, eff, marked := strings.Cut(tok, "!")
		kind := optFlag
		switch {
		case strings.HasSuffix(name, "=="):
			kind, name = optTwo, strings.TrimSuffix(name, "==")
		case strings.HasSuffix(name, "="):
			kind, name = optValue, strings.TrimSuffix(name, "=")
		case strings.HasSuffix(name, "?"):
			kind, name = optMaybe, strings.TrimSuffix(name, "?")
		}
		switch {
		case strings.HasPrefix(name, "--") && len(name) > 2:
			t.long[name] = kind
		case len(name) == 2 && (name[0] == '-' || name[0] == '+'):
			t.short[name[1]] = kind
		case len(name) > 2 && name[0] == '-': // a single-dash long option (nslookup -type=mx)
			t.long[name] = kind
		default:
			panic("shellscan: bad option token " + tok)
		}
		if marked {
			why, ok := effectWords[eff]
			if !ok {
				panic("shellscan: bad effect in option token " + tok)
			}
			t.unsafe[name] = why
		}
	}
	for n := range t.long {
		t.longNames = append(t.longNames, n)
	}
	sort.Strings(t.longNames)
	return t
}

func (t *optTable) with(f func(*optTable)) *optTable { f(t); return t }

// resolveLong finds the long option a word names: exactly or by a unique
// prefix. ambiguous lists the candidates when the prefix names several.
func (t *optTable) resolveLong(given string) (name string, kind optKind, ok bool, ambiguous []string) {
	if k, exact := t.long[given]; exact {
		return given, k, true, nil
	}
	i := sort.SearchStrings(t.longNames, given)
	for ; i < len(t.longNames) && strings.HasPrefix(t.longNames[i], given); i++ {
		ambiguous = append(ambiguous, t.longNames[i])
	}
	if len(ambiguous) == 1 {
		return ambiguous[0], t.long[ambiguous[0]], true, nil
	}
	return "", 0, false, ambiguous
}

// optVerdict is why a command's options are not read-only; empty when
// they are.
type optVerdict string

// check reads a command's arguments with its program's table.
func (t *optTable) check(c *Command) optVerdict {
	name := c.Name
	args := c.Args
	anyUnsafe := len(t.unsafe) > 0
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !c.ArgLiteral(i) {
			if anyUnsafe {
				return optVerdict("argument " + a + " of " + name + " is known only at run time and may be one of its options that write or run programs")
			}
			continue
		}
		if a == "--" {
			return ""
		}
		isOpt := len(a) > 1 && (a[0] == '-' || t.plus && a[0] == '+')
		if !isOpt {
			if t.bsd != nil && i == 0 {
				if v := t.bsd.cluster(name, "", a, args, &i); v != "" {
					return v
				}
				continue
			}
			continue // GNU permutes: options may follow operands
		}
		if t.digits && isDigits(a[1:]) {
			continue
		}
		var v optVerdict
		switch {
		case t.dashLong:
			v = t.longOpt(name, a, "-"+strings.TrimLeft(a, "-"), args, &i)
		case strings.HasPrefix(a, "--"):
			v = t.longOpt(name, a, a, args, &i)
		default:
			v = t.cluster(name, a[:1], a[1:], args, &i)
		}
		if v != "" {
			return v
		}
	}
	return ""
}

func (t *optTable) longOpt(name, word, given string, args []string, i *int) optVerdict {
	key, _, hasValue := strings.Cut(given, "=")
	opt, kind, ok, amb := t.resolveLong(key)
	if !ok {
		if len(amb) > 1 {
			return optVerdict("option " + key + " of " + name + " is ambiguous (" + strings.Join(amb, ", ") + "): not known to be read-only")
		}
		return optVerdict("unknown option " + key + " of " + name + ": not known to be read-only")
	}
	if why, bad := t.unsafe[opt]; bad {
		return optVerdict(name + " " + word + " (" + opt + ") " + why)
	}
	switch kind {
	case optValue:
		if !hasValue {
			*i++
		}
	case optTwo:
		*i += 2
	case optFlag:
		if hasValue {
			return optVerdict("option " + opt + " of " + name + " takes no value (" + word + "): not known to be read-only")
		}
	}
	return ""
}

// cluster reads combined short options (-rn, -ro FILE, -roFILE).
func (t *optTable) cluster(name, dash, letters string, args []string, i *int) optVerdict {
	for k := 0; k < len(letters); k++ {
		ch := letters[k]
		kind, ok := t.short[ch]
		opt := dash + string(ch)
		if !ok {
			if t.digits && ch >= '0' && ch <= '9' {
				continue
			}
			if dash == "" {
				return optVerdict("unknown option " + string(ch) + " in " + letters + " of " + name + ": not known to be read-only")
			}
			return optVerdict("unknown option " + opt + " of " + name + ": not known to be read-only")
		}
		if why, bad := t.unsafe[opt]; bad || dash == "+" && t.unsafe["-"+string(ch)] != "" {
			if !bad {
				why = t.unsafe["-"+string(ch)]
			}
			shown := dash + letters
			if shown != opt {
				shown += " (" + opt + ")"
			}
			return optVerdict(name + " " + shown + " " + why)
		}
		switch kind {
		case optValue:
			if k == len(letters)-1 {
				*i++
			}
			return ""
		case optMaybe:
			return ""
		case optTwo:
			*i += 2
			return ""
		}
	}
	return ""
}
