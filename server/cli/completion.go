package cli

import (
	"bytes"
	"errors"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

func (a *app) completionCmd(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish",
		Short: "Print a shell completion script",
		Long: `Print a completion script for your shell. For example:

  bash:  opsagent completion bash > /etc/bash_completion.d/opsagent
         (or: source <(opsagent completion bash) in ~/.bashrc; works without
         the bash-completion package too)
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
				return bashCompletion(root, w)
			case "zsh":
				return root.GenZshCompletion(w)
			}
			return root.GenFishCompletion(w, true)
		},
	}
}

// wordsByRef is cobra's call into the bash-completion package, which a plain
// bash (a minimal image, macOS, bash --norc) does not have.
const wordsByRef = `    _get_comp_words_by_ref "$@" cur prev words cword`

// wordsFallback uses that package's function when it is loaded and otherwise
// bash's own COMP_WORDS: words then split where COMP_WORDBREAKS says (at = and
// :), which only matters when completing --flag=value.
const wordsFallback = `    if declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
        _get_comp_words_by_ref "$@" cur prev words cword
    else
        words=("${COMP_WORDS[@]}")
        cword=$COMP_CWORD
        cur=${COMP_WORDS[COMP_CWORD]}
        prev=${COMP_WORDS[COMP_CWORD-1]}
    fi`

// bashCompletion is cobra's V2 bash script made to work without the
// bash-completion package.
func bashCompletion(root *cobra.Command, w io.Writer) error {
	var b bytes.Buffer
	if err := root.GenBashCompletionV2(&b, true); err != nil {
		return err
	}
	script := b.String()
	if !strings.Contains(script, wordsByRef) {
		// A cobra upgrade changed the script: fail loudly rather than ship one
		// that breaks in a plain bash (the terminal test catches it too).
		return errors.New("completion: cobra's bash script changed; update wordsByRef")
	}
	_, err := io.WriteString(w, strings.Replace(script, wordsByRef, wordsFallback, 1))
	return err
}
