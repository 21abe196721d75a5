package server

import "testing"

// The chat grammar of "investigate": the forms each platform sends, and
// questions that merely start with the word going to the agent instead.
func TestInvestigateCommandGrammar(t *testing.T) {
	id := "01a236c8-48ac-7903-8b47-3c498ae5265b"
	for text, want := range map[string]string{
		"investigate " + id:               id,
		"Investigate " + id + "  ":        id,
		"/investigate " + id:              id, // Telegram
		"/investigate@opsagent_bot " + id: id, // Telegram in a group
		"/opsagent investigate " + id:     id,
		"opsagent investigate INC-42":     "INC-42", // answered: not an id
		"investigate":                     "",
		"/investigate@opsagent_bot":       "",
	} {
		m := investigateCommand.FindStringSubmatch(text)
		if m == nil || m[1] != want {
			t.Errorf("%q: got %v, want the command with %q", text, m, want)
		}
	}
	for _, text := range []string{"investigate why the disk on web-1 fills", "please investigate " + id, "investigated " + id} {
		if investigateCommand.MatchString(text) {
			t.Errorf("%q must go to the agent, not start an investigation", text)
		}
	}
}
