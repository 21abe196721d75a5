package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// floorName is what the bare durable receiver is called in the ingest row.
const floorName = "floor (bare durable insert)"

// ingestFloor is .ci/bare-ingest under the same wrk script as opsagent:
// what the stack itself (Go's HTTP server, modernc.org/sqlite with WAL,
// synchronous=FULL and group commit, wrk on the same cores) allows before
// any of the product's work, so the ingest figures can be read against it.
type ingestFloor struct {
	p      *proc
	script string
}

// startFloor starts the floor when -bare-ingest is given (nil otherwise).
func startFloor(dir string) (*ingestFloor, error) {
	if *bareIng == "" {
		return nil, nil
	}
	data := filepath.Join(dir, "data-floor")
	if err := os.MkdirAll(data, 0o700); err != nil {
		return nil, err
	}
	p, err := startBare(*bareIng, data)
	if err != nil {
		return nil, err
	}
	var paths, secrets []string
	for i := 0; i < ingestHooks; i++ {
		paths, secrets = append(paths, fmt.Sprintf("/api/webhooks/floor-%d", i)), append(secrets, "unused")
	}
	f := &ingestFloor{p: p, script: filepath.Join(dir, "floor.lua")}
	return f, os.WriteFile(f.script, []byte(ingestLua(paths, secrets)), 0o600)
}

// run is one wrk run against the floor, described as a row reading, and
// its rate.
func (f *ingestFloor) run(conns, secs int) (string, float64, error) {
	res, err := runWrk(f.p, "http://"+f.p.addr, conns, secs, "-s", f.script, "--", nextRunLabel())
	if err != nil {
		return "", 0, err
	}
	fmt.Printf("  ingest at %d connections, %s: %s\n", conns, floorName, res)
	return fmt.Sprintf("%.0f/s (p99 %s)", res.rps, fmtDur(res.p99)), res.rps, nil
}
