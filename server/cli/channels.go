package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// Chat channels (Slack, Telegram, WhatsApp) of the current project
// (server/channels_api.go). Credentials go to the server's vault and never
// come back; the client never prints the ones it was given.

type channelRow struct {
	ID              string            `json:"id"`
	Platform        string            `json:"platform"`
	Name            string            `json:"name"`
	Enabled         bool              `json:"enabled"`
	AllowUnlinked   bool              `json:"allow_unlinked"`
	AllowedChatIDs  []string          `json:"allowed_chat_ids"`
	BotUserID       string            `json:"bot_user_id"`
	PhoneNumberID   string            `json:"phone_number_id"`
	InboundURL      string            `json:"inbound_url"`
	SetupSteps      []string          `json:"setup_steps"`
	IgnoredMessages int64             `json:"ignored_messages"`
	CreatedAt       time.Time         `json:"created_at"`
	Generated       map[string]string `json:"generated"`
}

func (ch *channelRow) state() string {
	if ch.Enabled {
		return "enabled"
	}
	return "disabled"
}

func (a *app) channelsCmd() *cobra.Command {
	return group("channels", "Chat channels of the current project (Slack, Telegram, WhatsApp): list, show, create, edit, enable, disable, test, delete, link, links, unlink",
		a.channelsListCmd(), a.channelShowCmd(), a.channelCreateCmd(), a.channelEditCmd(), a.channelToggleCmd(true), a.channelToggleCmd(false),
		a.channelTestCmd(), a.channelDeleteCmd(), a.channelLinkCmd(), a.channelLinksCmd(), a.channelUnlinkCmd())
}

func (a *app) channelsListCmd() *cobra.Command {
	return &cobra.Command{Use: "list", Short: "List the project's chat channels", Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, raw, err := getPage[channelRow](cmd.Context(), a, "/api/channels", nil)
			if err != nil {
				return err
			}
			ids := make([]string, len(p.Items))
			rows := make([][]string, len(p.Items))
			for i, ch := range p.Items {
				ids[i] = ch.ID
				rows[i] = []string{ch.ID, clip(ch.Name, 32), ch.Platform, a.out.status(ch.state()), dash(ch.BotUserID),
					strconv.FormatInt(ch.IgnoredMessages, 10), ch.InboundURL}
			}
			return a.emit(raw, ids, func() {
				a.out.table([]string{"ID", "NAME", "PLATFORM", "STATE", "BOT", "IGNORED", "INBOUND URL"}, rows)
			})
		}}
}

// showChannel prints a channel, its setup steps and, once, the secrets the
// server generated for it (the platform must be given them).
func (a *app) showChannel(raw json.RawMessage) error {
	var ch channelRow
	if err := json.Unmarshal(raw, &ch); err != nil {
		return err
	}
	return a.emit(raw, []string{ch.ID}, func() {
		chats := "every chat"
		if len(ch.AllowedChatIDs) > 0 {
			chats = strings.Join(ch.AllowedChatIDs, ", ")
		}
		pairs := [][2]string{{"id", ch.ID}, {"name", ch.Name}, {"platform", ch.Platform}, {"state", a.out.status(ch.state())},
			{"inbound url", ch.InboundURL}, {"allowed chats", chats}, {"unlinked people", map[bool]string{true: "may chat (never approve)", false: "ignored"}[ch.AllowUnlinked]},
			{"bot", dash(ch.BotUserID)}}
		if ch.Platform == "whatsapp" {
			pairs = append(pairs, [2]string{"phone number id", dash(ch.PhoneNumberID)})
		}
		pairs = append(pairs, [2]string{"ignored messages", strconv.FormatInt(ch.IgnoredMessages, 10)})
		a.out.fields(pairs)
		if len(ch.SetupSteps) > 0 {
			fmt.Fprintf(a.inv.Stdout, "\n%s\n", a.out.paint(bold, "Setup on the platform's side:"))
			for i, s := range ch.SetupSteps {
				fmt.Fprintf(a.inv.Stdout, "%2d. %s\n", i+1, s)
			}
		}
		if len(ch.Generated) > 0 {
			names := make([]string, 0, len(ch.Generated))
			for n := range ch.Generated {
				names = append(names, n)
			}
			sort.Strings(names)
			fmt.Fprintln(a.inv.Stdout)
			for _, n := range names {
				fmt.Fprintf(a.inv.Stdout, "%s %s\n", a.out.paint(dim, n+":"), ch.Generated[n])
			}
			a.out.note("%s", a.out.errPaint(dim, "The server generated the value(s) above for the platform's setup; they are shown only now."))
		}
	})
}

// resolveChannel accepts a channel id or its exact name.
func (a *app) resolveChannel(ctx context.Context, ref string) (string, error) {
	if looksLikeID(ref) {
		return ref, nil
	}
	p, _, err := getPage[channelRow](ctx, a, "/api/channels", nil)
	if err != nil {
		return "", err
	}
	var found []string
	for _, ch := range p.Items {
		if ch.Name == ref {
			found = append(found, ch.ID)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", &APIError{Status: 404, Detail: fmt.Sprintf("no channel named %q in this project", ref)}
	}
	return "", &Error{Code: ExitUsage, Err: fmt.Errorf("%d channels are named %q; use the id", len(found), ref)}
}

// channelCall resolves the channel argument and calls a route under it.
func (a *app) channelCall(cmd *cobra.Command, ref, method, sub string, body, out any) (string, json.RawMessage, error) {
	id, err := a.resolveChannel(cmd.Context(), ref)
	if err != nil {
		return "", nil, err
	}
	c, err := a.projectClient(cmd.Context())
	if err != nil {
		return "", nil, err
	}
	var raw json.RawMessage
	err = c.call(cmd.Context(), method, "/api/channels/"+url.PathEscape(id)+sub, nil, body, out, &raw)
	return id, raw, err
}

func (a *app) channelShowCmd() *cobra.Command {
	return &cobra.Command{Use: "show CHANNEL", Short: "Show a channel (id or name) with its inbound URL and setup steps", Args: exactArgs(1, "CHANNEL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, raw, err := a.channelCall(cmd, args[0], "GET", "", nil, nil)
			if err != nil {
				return err
			}
			return a.showChannel(raw)
		}}
}

// channelSettings are the flags create and edit share; edit sends only
// those given.
type channelSettings struct {
	name, botUserID, phoneNumberID string
	allowUnlinked                  bool
	allowChats                     []string
	creds                          channelCreds
}

func (cs *channelSettings) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&cs.name, "name", "", "the channel's name in this project")
	f.BoolVar(&cs.allowUnlinked, "allow-unlinked", false, "people who have not linked an account may chat (never approve)")
	f.StringSliceVar(&cs.allowChats, "allow-chat", nil, "only this chat (Slack channel id, Telegram chat id, WhatsApp number; repeatable; default every chat)")
	f.StringVar(&cs.botUserID, "bot-user-id", "", "slack: the bot's user id (test fills it); telegram: the bot's username")
	f.StringVar(&cs.phoneNumberID, "phone-number-id", "", "whatsapp: the business phone number id")
	cs.creds.add(cmd)
}

func (cs *channelSettings) body(cmd *cobra.Command) map[string]any {
	b := map[string]any{}
	set := func(flag, key string, v any) {
		if cmd.Flags().Changed(flag) {
			b[key] = v
		}
	}
	set("name", "name", cs.name)
	set("allow-unlinked", "allow_unlinked", cs.allowUnlinked)
	set("allow-chat", "allowed_chat_ids", cs.allowChats)
	set("bot-user-id", "bot_user_id", cs.botUserID)
	set("phone-number-id", "phone_number_id", cs.phoneNumberID)
	return b
}

func (a *app) channelCreateCmd() *cobra.Command {
	var cs channelSettings
	var platform string
	cmd := &cobra.Command{Use: "create --platform PLATFORM --name NAME [credentials] [flags]",
		Short: "Connect a chat channel; its credentials go to the server's vault and are never shown again", Args: exactArgs(0),
		Example: `  opsagent channels create --platform telegram --name oncall --bot-token - < bot-token.txt
  opsagent channels create --platform slack --name ops --credentials slack.json   # {"bot_token": "xoxb-...", "signing_secret": "..."}`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch platform {
			case "slack", "telegram", "whatsapp":
			default:
				return usageErrorf(cmd, "--platform must be slack, telegram or whatsapp")
			}
			if cs.name == "" {
				return usageErrorf(cmd, "--name is required")
			}
			creds, err := cs.creds.read(cmd, a.inv.Stdin)
			if err != nil {
				return err
			}
			if creds == nil {
				return usageErrorf(cmd, "the platform's credentials are required: %s", credentialsNeeded[platform])
			}
			body := cs.body(cmd)
			body["platform"], body["credentials"] = platform, creds
			c, err := a.projectClient(cmd.Context())
			if err != nil {
				return err
			}
			var raw json.RawMessage
			if err := c.call(cmd.Context(), "POST", "/api/channels", nil, body, nil, &raw); err != nil {
				return err
			}
			return a.showChannel(raw)
		}}
	cs.add(cmd)
	cmd.Flags().StringVar(&platform, "platform", "", "slack, telegram or whatsapp")
	return cmd
}

func (a *app) channelEditCmd() *cobra.Command {
	var cs channelSettings
	cmd := &cobra.Command{Use: "edit CHANNEL [flags]", Short: "Change a channel (only the flags given; credentials given replace them all)", Args: exactArgs(1, "CHANNEL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			body := cs.body(cmd)
			creds, err := cs.creds.read(cmd, a.inv.Stdin)
			if err != nil {
				return err
			}
			if creds != nil {
				body["credentials"] = creds
			}
			if len(body) == 0 {
				return usageErrorf(cmd, "nothing to change: give at least one of the flags")
			}
			_, raw, err := a.channelCall(cmd, args[0], "PATCH", "", body, nil)
			if err != nil {
				return err
			}
			return a.showChannel(raw)
		}}
	cs.add(cmd)
	return cmd
}

func (a *app) channelToggleCmd(on bool) *cobra.Command {
	use, short := "disable CHANNEL", "Stop a channel: the bot ignores its chats until enabled"
	if on {
		use, short = "enable CHANNEL", "Let a channel's chats reach the agent again"
	}
	return &cobra.Command{Use: use, Short: short, Args: exactArgs(1, "CHANNEL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, raw, err := a.channelCall(cmd, args[0], "PATCH", "", map[string]any{"enabled": on}, nil)
			if err != nil {
				return err
			}
			return a.showChannel(raw)
		}}
}

func (a *app) channelTestCmd() *cobra.Command {
	return &cobra.Command{Use: "test CHANNEL", Short: "Check the channel's credentials against the platform (exit 1 when they fail)", Args: exactArgs(1, "CHANNEL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var out struct {
				OK     bool   `json:"ok"`
				Detail string `json:"detail"`
			}
			id, raw, err := a.channelCall(cmd, args[0], "POST", "/test", nil, &out)
			if err != nil {
				return err
			}
			if err := a.emit(raw, []string{id}, func() {
				if out.OK {
					fmt.Fprintf(a.inv.Stdout, "%s %s\n", a.out.paint(green, "ok:"), out.Detail)
				}
			}); err != nil {
				return err
			}
			if !out.OK {
				return &Error{Code: ExitError, Err: fmt.Errorf("the platform refused the channel's credentials: %s", out.Detail)}
			}
			return nil
		}}
}

func (a *app) channelDeleteCmd() *cobra.Command {
	return &cobra.Command{Use: "delete CHANNEL", Short: "Delete a channel (its sessions stay)", Args: exactArgs(1, "CHANNEL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, _, err := a.channelCall(cmd, args[0], "DELETE", "", nil, nil)
			if err != nil {
				return err
			}
			switch {
			case a.out.json:
				return a.out.printJSON([]byte(`{"id":` + strconv.Quote(id) + `,"deleted":true}`))
			case a.out.quiet:
				a.out.ids(id)
			default:
				fmt.Fprintf(a.inv.Stdout, "Deleted channel %s\n", id)
			}
			return nil
		}}
}
