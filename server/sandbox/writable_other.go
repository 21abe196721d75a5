//go:build !linux

package sandbox

func (p Profile) writable(string) bool { return true }
