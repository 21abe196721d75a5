//go:build !pprof

package main

import "log/slog"

// startPprof: see main_pprof.go; without the pprof build tag there is no
// profiler, and OPSAGENT_PPROF_ADDR is ignored.
func startPprof(string, *slog.Logger) error { return nil }
