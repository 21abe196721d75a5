package main

import (
	"os"
	"os/exec"
	"testing"
)

// The README's first-hour recipe runs verbatim, twice, against a fresh
// server built from this tree (.ci/first-hour.sh, bash + curl + jq).
func TestFirstHourRecipe(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed; .ci/run installs it", tool)
			}
			t.Skipf("%s is not installed", tool)
		}
	}
	out, err := exec.Command("bash", ".ci/first-hour.sh").CombinedOutput()
	if err != nil {
		t.Fatalf("first-hour recipe: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
