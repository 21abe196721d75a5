package cliclient

import (
	"context"
	"flag"
	"fmt"
	"io"
)

// Run is the `opsagent login` and `opsagent logout` subcommands: flags, then
// Login or Logout. getenv supplies OPSAGENT_SERVER and OPSAGENT_CREDENTIALS.
func Run(ctx context.Context, cmd string, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	defServer := getenv("OPSAGENT_SERVER")
	if defServer == "" && cmd == "login" {
		defServer = "http://127.0.0.1:8080"
	}
	server := fs.String("server", defServer, "server base URL (env OPSAGENT_SERVER)")
	path := fs.String("credentials", getenv("OPSAGENT_CREDENTIALS"), "credentials file (env OPSAGENT_CREDENTIALS; default USER_CONFIG_DIR/opsagent/credentials.json)")
	profile := fs.String("profile", getenv("OPSAGENT_PROFILE"), "keep this sign-in under a named profile (env OPSAGENT_PROFILE); the client commands take the same flag")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected argument %q", cmd, fs.Arg(0))
	}
	if *path == "" && *profile != "" {
		p, err := ProfilePath(*profile)
		if err != nil {
			return err
		}
		*path = p
	}
	o := Options{Server: *server, Path: *path, Out: stdout}
	switch cmd {
	case "login":
		_, err := Login(ctx, o)
		return err
	case "logout":
		return Logout(ctx, o)
	}
	return fmt.Errorf("cliclient: unknown command %q", cmd)
}
