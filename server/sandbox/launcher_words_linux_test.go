package sandbox

import (
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server/sandbox/confine"
)

// Every Profile field reaches the launcher: each is set in turn, sent as
// launcher words and read back by the launcher's own parser into the
// field of the same name and key. A field added to Profile without the
// launcher knowing it fails here (and the launcher refuses it at run
// time with "unknown field").
func TestEveryProfileFieldReachesTheLauncher(t *testing.T) {
	pt, st := reflect.TypeOf(Profile{}), reflect.TypeOf(confine.Spec{})
	for i := 0; i < pt.NumField(); i++ {
		f := pt.Field(i)
		sf, ok := st.FieldByName(f.Name)
		if !ok || sf.Tag.Get("json") != f.Tag.Get("json") || sf.Type != f.Type {
			t.Errorf("Profile.%s (%s) has no twin in confine.Spec", f.Name, f.Tag.Get("json"))
			continue
		}
		var p Profile
		v := reflect.ValueOf(&p).Elem().Field(i)
		switch v.Kind() {
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Int:
			v.SetInt(7)
		case reflect.String:
			v.SetString("/some where=x")
		case reflect.Slice:
			v.Set(reflect.ValueOf([]string{"/a", "/b=c d"}))
		}
		s, err := confine.Parse(p.launcherWords())
		if err != nil {
			t.Errorf("%s: %v", f.Name, err)
			continue
		}
		if got := reflect.ValueOf(s).FieldByName(f.Name); !reflect.DeepEqual(got.Interface(), v.Interface()) {
			t.Errorf("%s: sent %v, the launcher read %v", f.Name, v.Interface(), got.Interface())
		}
	}
}

// The launcher runs before the rest of the binary is initialised: started
// as the launcher, this test binary execs the command before
// golang.org/x/sys/unix (which this package imports and the launcher does
// not) or this package itself has been initialised. With the launcher in
// Init, called from TestMain, every package's init would show.
func TestLauncherRunsBeforeTheBinarysPackageInit(t *testing.T) {
	self, _ := os.Executable()
	cmd := exec.Command(self, (Profile{DenyHostStop: true, LandlockABI: Probe().LandlockABI}).launcherArgs("/bin/true")...)
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v %s", err, out)
	}
	trace := string(out)
	if !strings.Contains(trace, "init os @") {
		t.Fatalf("no init trace: %s", trace)
	}
	for _, late := range []string{"init golang.org/x/sys/unix @", "init github.com/opsagent/opsagent/server/sandbox @", "init testing @"} {
		if strings.Contains(trace, late) {
			t.Errorf("%q ran before the launcher execed the command", late)
		}
	}
}
