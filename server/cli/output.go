package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/mattn/go-isatty"
)

// output writes results in one of three forms: aligned tables for people,
// the server's JSON (--json), or ids only (--quiet). Colours and spinners
// appear only on a terminal, and colours never with NO_COLOR.
type output struct {
	w, errw   io.Writer
	json      bool
	quiet     bool
	color     bool // stdout is a terminal and colours are allowed
	errColor  bool
	errTTY    bool
	stdoutTTY bool
}

func newOutput(w, errw io.Writer, jsonOut, quiet, noColor bool) *output {
	o := &output{w: w, errw: errw, json: jsonOut, quiet: quiet}
	o.stdoutTTY = isTerminal(w)
	o.errTTY = isTerminal(errw)
	o.color = o.stdoutTTY && !noColor
	o.errColor = o.errTTY && !noColor
	return o
}

func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// ANSI styles.
const (
	bold   = "01" // two digits like the colours, so tabwriter's widths stay even
	dim    = "02"
	plain  = "39"
	red    = "31"
	green  = "32"
	yellow = "33"
	cyan   = "36"
)

func paint(on bool, style, s string) string {
	if !on {
		return s
	}
	return "\x1b[" + style + "m" + s + "\x1b[0m"
}

func (o *output) paint(style, s string) string    { return paint(o.color, style, s) }
func (o *output) errPaint(style, s string) string { return paint(o.errColor, style, s) }

// printJSON writes the server's answer indented, one document per call.
func (o *output) printJSON(raw []byte) error {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return err
	}
	buf.WriteByte('\n')
	_, err := o.w.Write(buf.Bytes())
	return err
}

// table writes rows under a header, columns aligned.
func (o *output) table(header []string, rows [][]string) {
	if len(rows) == 0 {
		fmt.Fprintln(o.errw, o.errPaint(dim, "(none)"))
		return
	}
	tw := tabwriter.NewWriter(o.w, 0, 4, 2, ' ', 0)
	h := make([]string, len(header))
	for i, c := range header {
		h[i] = o.paint(bold, c)
	}
	fmt.Fprintln(tw, strings.Join(h, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
}

// fields writes "name: value" lines, names aligned.
func (o *output) fields(pairs [][2]string) {
	tw := tabwriter.NewWriter(o.w, 0, 4, 1, ' ', 0)
	for _, p := range pairs {
		fmt.Fprintf(tw, "%s\t%s\n", o.paint(dim, p[0]+":"), p[1])
	}
	tw.Flush()
}

func (o *output) ids(ids ...string) {
	for _, id := range ids {
		fmt.Fprintln(o.w, id)
	}
}

// note is a line for people on stderr (never mixed into what scripts parse).
func (o *output) note(format string, a ...any) {
	if o.quiet {
		return
	}
	fmt.Fprintln(o.errw, fmt.Sprintf(format, a...))
}

// spinner shows progress on a terminal's stderr until the returned func is
// called; elsewhere it does nothing.
func (o *output) spinner(msg string) func() {
	if !o.errTTY || o.json || o.quiet {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Quick answers never show it: the first frame waits a moment.
		select {
		case <-done:
			return
		case <-time.After(200 * time.Millisecond):
		}
		frames := []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			fmt.Fprintf(o.errw, "\r%s %s", o.errPaint(cyan, frames[i%len(frames)]), msg)
			select {
			case <-done:
				fmt.Fprint(o.errw, "\r\x1b[K")
				return
			case <-t.C:
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done); wg.Wait() }) }
}

// Formatting helpers for table cells.

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func when(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return ago(*t)
}

// ago is a short relative time for tables ("3m ago", "in 2h"); --json keeps
// the exact RFC 3339 time.
func ago(t time.Time) string {
	d := time.Since(t)
	suffix := " ago"
	if d < 0 {
		return "in " + short(-d)
	}
	if d < 5*time.Second {
		return "just now"
	}
	return short(d) + suffix
}

func short(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func yesno(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func money(f float64) string { return fmt.Sprintf("$%.4f", f) }

// statusStyle colours a status word.
func (o *output) status(s string) string {
	switch s {
	case "completed", "approved", "resolved", "dispatched", "enabled":
		return o.paint(green, s)
	case "failed", "timeout", "denied", "expired", "triggered", "disabled":
		return o.paint(red, s)
	case "running", "pending", "acknowledged", "waiting approval", "approval_pending":
		return o.paint(yellow, s)
	}
	// Painted too, so every cell of the column carries the same escape bytes.
	return o.paint(plain, s)
}
