package cli

import (
	"github.com/spf13/cobra"
)

func (a *app) completionCmd(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish",
		Short: "Print a shell completion script",
		Long: `Print a completion script for your shell. For example:

  bash:  opsagent completion bash > /etc/bash_completion.d/opsagent
         (or: source <(opsagent completion bash) in ~/.bashrc)
  zsh:   opsagent completion zsh > "${fpath[1]}/_opsagent"
  fish:  opsagent completion fish > ~/.config/fish/completions/opsagent.fish`,
		ValidArgs: []string{"bash", "zsh", "fish"},
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf(cmd, "name one shell: bash, zsh or fish")
			}
			switch args[0] {
			case "bash", "zsh", "fish":
				return nil
			}
			return usageErrorf(cmd, "unsupported shell %q: bash, zsh or fish", args[0])
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			w := a.inv.Stdout
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(w, true)
			case "zsh":
				return root.GenZshCompletion(w)
			}
			return root.GenFishCompletion(w, true)
		},
	}
}
