// Package prompts holds the agent's system prompts as versioned files, one
// per agent type (the task's agent_type) and the method every type follows.
// Each file's first line is "version: <name>/<n>"; a session records the
// versions it ran with, so evaluations can compare them. Edit a file's
// text and raise its number together.
package prompts

import (
	"embed"
	"fmt"
	"strings"
)

//go:embed *.md
var files embed.FS

// Prompt is one agent type's framing.
type Prompt struct {
	Role    string // the agent type's own text
	Method  string // the investigation method all types share
	Version string // "sre/1+method/1"
}

// For returns the prompt of agentType (general for an unknown one).
func For(agentType string) Prompt {
	role, rv, err := read(agentType)
	if err != nil {
		role, rv, _ = read("general")
	}
	method, mv, _ := read("method")
	return Prompt{Role: role, Method: method, Version: rv + "+" + mv}
}

func read(name string) (text, version string, err error) {
	if strings.ContainsAny(name, "/.") || name == "" {
		return "", "", fmt.Errorf("prompts: bad name %q", name)
	}
	b, err := files.ReadFile(name + ".md")
	if err != nil {
		return "", "", err
	}
	first, rest, _ := strings.Cut(string(b), "\n")
	v, ok := strings.CutPrefix(first, "version: ")
	if !ok {
		return "", "", fmt.Errorf("prompts: %s.md lacks its version line", name)
	}
	return strings.TrimSpace(rest), strings.TrimSpace(v), nil
}
