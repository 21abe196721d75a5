package connector

import (
	"encoding/json"
	"testing"

	"github.com/opsagent/opsagent/server/sandbox"
)

// Frame flattens its parts: a field name two parts share would vanish
// from the JSON, and a host would run without the profile it was sent.
func TestFrameCarriesTheSandboxBothWays(t *testing.T) {
	for _, f := range []*Frame{
		{Type: TypeRun, CallID: "c", Run: &Run{Command: "true", Sandbox: &sandbox.Profile{ReadOnly: true, NoDelete: true}}},
		{Type: TypeHello, Hello: &Hello{Version: "v", Sandbox: &sandbox.Kernel{OS: "linux", LandlockABI: 6, Seccomp: true}}},
		{Type: TypeResult, CallID: "c", Result: &Result{ExitCode: 1, SandboxRefused: []string{"write to /x"}}},
	} {
		var back Frame
		if err := json.Unmarshal(Encode(f), &back); err != nil {
			t.Fatal(err)
		}
		switch {
		case f.Run != nil && (back.Run == nil || back.Run.Sandbox == nil || !back.Run.Sandbox.ReadOnly || !back.Run.Sandbox.NoDelete):
			t.Errorf("run lost its profile: %s", Encode(f))
		case f.Hello != nil && (back.Hello == nil || back.Hello.Sandbox == nil || back.Hello.Sandbox.LandlockABI != 6):
			t.Errorf("hello lost its kernel: %s", Encode(f))
		case f.Result != nil && (back.Result == nil || len(back.Result.SandboxRefused) != 1):
			t.Errorf("result lost its refusals: %s", Encode(f))
		}
	}
}
