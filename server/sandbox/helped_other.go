//go:build !linux

package sandbox

// helped is Linux's helper-started command; elsewhere there is none.
type helped struct{}

func (c *Cmd) startViaHelper() (bool, error) { return false, nil }

func (c *Cmd) waitHelped() error { return c.Cmd.Wait() }
