package llm

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestEstimateNeverUndercountsKnownCounts checks the estimate against the
// published counts in testdata/token_counts.json and logs by how much it
// overcounts each, the figure README's "Using a local LLM" quotes.
func TestEstimateNeverUndercountsKnownCounts(t *testing.T) {
	raw, err := os.ReadFile("testdata/token_counts.json")
	if err != nil {
		t.Fatal(err)
	}
	var corpus struct {
		Texts []struct {
			Text, Tokenizer, Source string
			Tokens                  int
		}
		Requests []struct {
			Tokens   int
			System   string
			Messages []Message
		}
	}
	if err := json.Unmarshal(raw, &corpus); err != nil {
		t.Fatal(err)
	}
	if len(corpus.Texts) < 5 || len(corpus.Requests) == 0 {
		t.Fatal("the corpus lost its cases")
	}
	var est, known int
	for _, c := range corpus.Texts {
		got := EstimateTokens(c.Text)
		if got < c.Tokens {
			t.Errorf("EstimateTokens(%q) = %d, below the %d tokens %s counts (%s)", c.Text, got, c.Tokens, c.Tokenizer, c.Source)
		}
		t.Logf("%-36q known %3d estimate %3d (x%.2f)", c.Text, c.Tokens, got, float64(got)/float64(c.Tokens))
		est, known = est+got, known+c.Tokens
	}
	for _, r := range corpus.Requests {
		got := EstimateRequest(Request{System: r.System, Messages: r.Messages})
		if got < r.Tokens {
			t.Errorf("EstimateRequest = %d, below the %d the API counted", got, r.Tokens)
		}
		t.Logf("cookbook conversation: known %d estimate %d (x%.2f)", r.Tokens, got, float64(got)/float64(r.Tokens))
		est, known = est+got, known+r.Tokens
	}
	t.Logf("whole corpus: known %d, estimate %d, overcount x%.2f", known, est, float64(est)/float64(known))
}

// TestEstimateShapes pins the rules the estimate is built from, each of
// which some tokenizer needs: a token per digit, per punctuation mark, per
// space before a non-letter, two per CJK character, vowel-less runs at
// two letters a token.
func TestEstimateShapes(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{"", 0}, {"12345", 5}, {"{}", 2}, {"a b", 2}, {"x 1", 3}, {"日本", 4}, {"kbctl", 3}, {"aGVsbG8", 5},
		{strings.Repeat(" ", 8) + "x", 5},
	} {
		if got := EstimateTokens(c.in); got != c.want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}
