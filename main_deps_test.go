package main

import (
	"os/exec"
	"strings"
	"testing"
)

// heavyOrTestOnly are modules that must never be linked into the product
// binary: test drivers (a browser, the payment and provider SDKs the fakes
// are cross-checked with) and the LLM SDKs our own clients replaced, which
// cost 30 MB together (BENCHMARKS.md, "Binary size").
var heavyOrTestOnly = []string{
	"github.com/chromedp/",
	"github.com/stripe/stripe-go",
	"github.com/openai/openai-go",
	"github.com/anthropics/anthropic-sdk-go",
	"github.com/descope/virtualwebauthn",
	"github.com/slack-go/slack", // slacktest only: linked in it cost 2.1 MB (BENCHMARKS.md, "Chat channels")
	"github.com/stretchr/testify",
	"github.com/aws/aws-sdk-go",
	"google.golang.org/grpc",
	"cloud.google.com/",
}

func TestProductBinaryLinksNoTestOnlyOrReplacedModules(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go tool is not on PATH; this check runs where the binary is built")
	}
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, banned := range heavyOrTestOnly {
			if strings.HasPrefix(pkg, banned) {
				t.Errorf("the product binary links %s; keep it in tests only", pkg)
			}
		}
	}
}
