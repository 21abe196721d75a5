package main

import (
	"strings"
	"testing"
	"time"
)

// The sustained figure is judged by its mean and its fitted trend, so a
// noisy but flat five minutes meets and a server that slows down as it
// fills does not, however noisy.
func TestIngestVerdict(t *testing.T) {
	old := *ingSecs
	*ingSecs = 30
	defer func() { *ingSecs = old }()
	flatCPU := []float64{130, 150, 128, 135, 160, 131, 140, 129, 152, 133}
	cases := []struct {
		name  string
		rates []float64
		cpu   []float64
		p99   time.Duration
		want  string
	}{
		{"noisy but flat", []float64{12300, 11300, 11500, 12600, 11100, 9500, 11600, 10700, 12900, 10900}, flatCPU, 19 * time.Millisecond, "meets"},
		{"mean under 10k", []float64{9800, 9900, 9700, 9900, 10300, 9500, 9400, 10400, 10000, 9400}, flatCPU, 19 * time.Millisecond, "SHORT"},
		{"slows down", []float64{14000, 13600, 13200, 12800, 12400, 12000, 11600, 11200, 10800, 10400}, flatCPU, 19 * time.Millisecond, "SHORT"},
		{"CPU per event grows", []float64{12000, 12100, 11900, 12000, 12050, 11950, 12000, 12100, 11900, 12000},
			[]float64{120, 124, 128, 132, 136, 140, 144, 148, 152, 156}, 19 * time.Millisecond, "SHORT"},
		{"p99 at 64", []float64{12000, 12100, 11900, 12000, 12050, 11950, 12000, 12100, 11900, 12000}, flatCPU, 26 * time.Millisecond, "SHORT"},
		{"short runs strictly", []float64{14100, 12800, 11900}, nil, 18 * time.Millisecond, "SHORT"},
		{"short runs within 10 %", []float64{11000, 10500, 10800}, nil, 18 * time.Millisecond, "meets"},
	}
	for _, c := range cases {
		got, trend := ingestVerdict(c.rates, c.cpu, nil, c.p99)
		if got != c.want {
			t.Errorf("%s: %s, want %s (%s)", c.name, got, c.want, trend)
		}
		if len(c.rates) >= 5 && !strings.Contains(trend, "raw spread") {
			t.Errorf("%s: the raw spread is not printed: %s", c.name, trend)
		}
	}
}
