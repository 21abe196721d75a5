package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
)

// terminal is the person at the keyboard: lines typed on stdin (read by one
// goroutine, so prompts and questions share them) and Ctrl-C. Questions are
// asked only when stdin is a terminal; a script's stdin is never waited on.
type terminal struct {
	in    io.Reader
	errw  io.Writer
	tty   bool
	once  sync.Once
	lines chan string
	sig   chan os.Signal
}

func newTerminal(in io.Reader, errw io.Writer) *terminal {
	return &terminal{in: in, errw: errw, tty: isTerminal(in)}
}

// catchInterrupts routes Ctrl-C here instead of ending the process.
func (t *terminal) catchInterrupts() func() {
	t.sig = make(chan os.Signal, 2)
	signal.Notify(t.sig, os.Interrupt)
	return func() { signal.Stop(t.sig) }
}

// interrupts is nil (never ready) unless catchInterrupts was called.
func (t *terminal) interrupts() <-chan os.Signal {
	if t == nil {
		return nil
	}
	return t.sig
}

func (t *terminal) canAsk() bool { return t != nil && t.tty }

func (t *terminal) readLines() <-chan string {
	t.once.Do(func() {
		t.lines = make(chan string)
		go func() {
			defer close(t.lines)
			br := bufio.NewReader(t.in)
			for {
				line, err := br.ReadString('\n')
				if line != "" || err == nil {
					t.lines <- strings.TrimRight(line, "\r\n")
				}
				if err != nil {
					return
				}
			}
		}()
	})
	return t.lines
}

// prompt shows p and waits for a line. ok is false at end of input;
// interrupted is true when Ctrl-C came instead.
func (t *terminal) prompt(ctx context.Context, p string) (line string, ok, interrupted bool) {
	if t.tty {
		fmt.Fprint(t.errw, p)
	}
	select {
	case l, more := <-t.readLines():
		return l, more, false
	case <-t.interrupts():
		fmt.Fprintln(t.errw)
		return "", false, true
	case <-ctx.Done():
		return "", false, false
	}
}

// ask asks a question; again is true when Ctrl-C was pressed instead of an
// answer (or the input ended).
func (t *terminal) ask(ctx context.Context, q string) (answer string, again bool) {
	line, ok, intr := t.prompt(ctx, q)
	if intr || !ok {
		return "", true
	}
	return strings.TrimSpace(line), false
}

func isYes(s string) bool {
	s = strings.ToLower(strings.TrimSpace(s))
	return s == "y" || s == "yes"
}
