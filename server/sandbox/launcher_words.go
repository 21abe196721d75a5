package sandbox

import (
	"reflect"
	"strconv"
	"strings"

	"github.com/opsagent/opsagent/server/sandbox/confine"
)

// launcherWords is p as the launcher reads it (confine.Parse): one word
// per switch that is on ("read_only") and per value ("write_paths=/srv"),
// named by the field's JSON key. It is built from the fields themselves,
// so a field added to Profile is always sent; a launcher that does not
// know it refuses to run (exit 126) instead of dropping it.
func (p Profile) launcherWords() []string {
	var words []string
	v := reflect.ValueOf(p)
	for i := 0; i < v.NumField(); i++ {
		key, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Bool:
			if f.Bool() {
				words = append(words, key)
			}
		case reflect.Int:
			if f.Int() != 0 {
				words = append(words, key+"="+strconv.FormatInt(f.Int(), 10))
			}
		case reflect.String:
			if f.String() != "" {
				words = append(words, key+"="+f.String())
			}
		case reflect.Slice:
			for j := 0; j < f.Len(); j++ {
				words = append(words, key+"="+f.Index(j).String())
			}
		default:
			// A kind this encoding does not carry: the launcher is told
			// something it refuses, so the command cannot run without it.
			words = append(words, key+"=unsupported-"+f.Kind().String())
		}
	}
	return words
}

// spec is p as the kernel layer sees it, read the same way the launcher
// reads it.
func (p Profile) spec() (confine.Spec, error) { return confine.Parse(p.launcherWords()) }

// writable reports whether the profile lets a command write path (for
// naming what the sandbox refused). A profile the kernel layer cannot
// read never ran anything, so nothing is writable.
func (p Profile) writable(path string) bool {
	s, err := p.spec()
	return err == nil && s.Writable(path)
}
