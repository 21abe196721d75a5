package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// channelCreds reads a channel's credentials from flags or, so they stay
// out of the shell's history and the process list, from stdin ("-") or a
// file: never echoed back.
type channelCreds struct {
	file   string
	values map[string]*string // API name -> flag value
}

// credentialNames are the API's credential fields, each a flag of its own.
var credentialNames = []string{"bot_token", "signing_secret", "secret_token", "access_token", "app_secret", "verify_token"}

var credentialsNeeded = map[string]string{
	"slack":    "--bot-token and --signing-secret (or --credentials)",
	"telegram": "--bot-token (or --credentials); a secret_token is generated when not given",
	"whatsapp": "--access-token and --app-secret (or --credentials); a verify_token is generated when not given",
}

func (cc *channelCreds) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&cc.file, "credentials", "", `JSON file of the credentials, e.g. {"bot_token": "...", "signing_secret": "..."} ("-" reads stdin)`)
	cc.values = map[string]*string{}
	for _, n := range credentialNames {
		cc.values[n] = f.String(strings.ReplaceAll(n, "_", "-"), "", n+` ("-" reads it from stdin)`)
	}
}

// read returns the credentials given (nil when none were).
func (cc *channelCreds) read(cmd *cobra.Command, stdin io.Reader) (map[string]string, error) {
	stdinUsed := ""
	fromStdin := func(flag string) ([]byte, error) {
		if stdinUsed != "" {
			return nil, usageErrorf(cmd, "only one of --%s and --%s can read stdin", stdinUsed, flag)
		}
		stdinUsed = flag
		return io.ReadAll(io.LimitReader(stdin, 64<<10))
	}
	var creds map[string]string
	if cc.file != "" {
		var b []byte
		var err error
		if cc.file == "-" {
			b, err = fromStdin("credentials")
		} else {
			b, err = os.ReadFile(cc.file)
		}
		if err != nil {
			var ue *Error
			if errors.As(err, &ue) {
				return nil, err
			}
			return nil, usageErrorf(cmd, "--credentials: %v", err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		var in struct {
			BotToken      string `json:"bot_token"`
			SigningSecret string `json:"signing_secret"`
			SecretToken   string `json:"secret_token"`
			AccessToken   string `json:"access_token"`
			AppSecret     string `json:"app_secret"`
			VerifyToken   string `json:"verify_token"`
		}
		if err := dec.Decode(&in); err != nil {
			// The decoder's message never quotes the file's values.
			return nil, usageErrorf(cmd, "--credentials is not a JSON object of %s: %v", strings.Join(credentialNames, ", "), err)
		}
		creds = map[string]string{"bot_token": in.BotToken, "signing_secret": in.SigningSecret, "secret_token": in.SecretToken,
			"access_token": in.AccessToken, "app_secret": in.AppSecret, "verify_token": in.VerifyToken}
	}
	for _, n := range credentialNames {
		flag := strings.ReplaceAll(n, "_", "-")
		if !cmd.Flags().Changed(flag) {
			continue
		}
		v := *cc.values[n]
		if v == "-" {
			b, err := fromStdin(flag)
			if err != nil {
				return nil, err
			}
			v = strings.TrimSpace(string(b))
		}
		if creds == nil {
			creds = map[string]string{}
		}
		creds[n] = v
	}
	for n, v := range creds {
		if v == "" {
			delete(creds, n)
		}
	}
	return creds, nil
}

func (a *app) channelLinkCmd() *cobra.Command {
	return &cobra.Command{Use: "link CHANNEL", Short: "Issue a one-time code that links your chat account to you (signed-in people only)", Args: exactArgs(1, "CHANNEL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var out struct {
				Code        string    `json:"code"`
				ExpiresAt   time.Time `json:"expires_at"`
				Instruction string    `json:"instruction"`
			}
			_, raw, err := a.channelCall(cmd, args[0], "POST", "/link-codes", nil, &out)
			if err != nil {
				return err
			}
			return a.emit(raw, []string{out.Code}, func() {
				fmt.Fprintf(a.inv.Stdout, "%s\n", out.Code)
				a.out.note("%s", a.out.errPaint(dim, "From your chat account, "+out.Instruction+" (single use, expires "+ago(out.ExpiresAt)+")."))
			})
		}}
}

func (a *app) channelLinksCmd() *cobra.Command {
	return &cobra.Command{Use: "links CHANNEL", Short: "List the chat accounts linked to people", Args: exactArgs(1, "CHANNEL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var out struct {
				Items []struct {
					ID             string    `json:"id"`
					ExternalUserID string    `json:"external_user_id"`
					ExternalName   string    `json:"external_name"`
					UserEmail      string    `json:"user_email"`
					CreatedAt      time.Time `json:"created_at"`
				} `json:"items"`
			}
			_, raw, err := a.channelCall(cmd, args[0], "GET", "/links", nil, &out)
			if err != nil {
				return err
			}
			ids := make([]string, len(out.Items))
			rows := make([][]string, len(out.Items))
			for i, l := range out.Items {
				ids[i] = l.ID
				rows[i] = []string{l.ID, l.ExternalUserID, dash(l.ExternalName), l.UserEmail, ago(l.CreatedAt)}
			}
			return a.emit(raw, ids, func() {
				a.out.table([]string{"ID", "CHAT USER", "CHAT NAME", "PERSON", "LINKED"}, rows)
			})
		}}
}

func (a *app) channelUnlinkCmd() *cobra.Command {
	return &cobra.Command{Use: "unlink CHANNEL LINK_ID", Short: "Unlink a chat account from its person", Args: exactArgs(2, "CHANNEL", "LINK_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, _, err := a.channelCall(cmd, args[0], "DELETE", "/links/"+url.PathEscape(args[1]), nil, nil); err != nil {
				return err
			}
			switch {
			case a.out.json:
				return a.out.printJSON([]byte(fmt.Sprintf(`{"id":%q,"deleted":true}`, args[1])))
			case a.out.quiet:
				a.out.ids(args[1])
			default:
				fmt.Fprintf(a.inv.Stdout, "Unlinked %s\n", args[1])
			}
			return nil
		}}
}
