package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"time"
)

type loginer struct {
	c     *http.Client
	email string
}

// rowLogin: sign-ins per second, 8 concurrent clients over 64 accounts,
// each account from its own loopback address (logins are rate limited per
// address and per account).
func rowLogin(dir string) (string, error) {
	lines := map[string][]string{}
	var mine float64
	for _, b := range builds() {
		p, err := startOpsagent(b.bin, filepath.Join(dir, "data-"+b.name[:4]), "--signup", "open")
		if err != nil {
			return "", err
		}
		accts, err := registerMany(p, 64)
		if err != nil {
			p.stop()
			return "", err
		}
		pool := make([]loginer, len(accts))
		for i, a := range accts {
			pool[i] = loginer{client(srcIP(i)), a.email}
		}
		res := closedLoop(p, 8, time.Duration(*secs)*time.Second, pool, func(l loginer) (loginer, int, error) {
			resp, err := call(l.c, "POST", p.url("/api/auth/login"), "", "", map[string]string{"email": l.email, "password": password}, nil)
			if resp != nil && err != nil {
				return l, resp.StatusCode, err
			}
			return l, 200, err
		})
		p.stop()
		if b.name == "this build" {
			mine = res.rate()
		}
		lines[b.name] = append(lines[b.name], res.String())
		fmt.Printf("  logins, %s: %s\n", b.name, res)
	}
	verdict := "meets"
	if mine < 50 {
		verdict = "SHORT"
	}
	return fmt.Sprintf("| logins (argon2id m=12 MiB t=3 p=1), built binary, 8 concurrent clients over 64 accounts (21) | `.ci/bench.sh login` | %s; %s; load %s | >= 50/s |",
		describe(lines), verdict, loadavg()), nil
}
