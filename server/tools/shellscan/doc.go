// Package shellscan works out what a shell command line would run, for the
// rules that decide on run_command calls. It parses the line with a real
// shell parser (mvdan.cc/sh/v3/syntax, bash dialect, the superset of sh),
// and reports every simple command of every pipeline, list, subshell,
// function body, $(...), backquote, process substitution, here-document or
// here-string fed to a shell, and sh -c / bash -c string (recursively), seen
// through wrappers (sudo, env, nice, timeout, xargs, find -exec, busybox,
// ...), with quotes and escapes removed, brace expansion done, and a path or
// glob in command position kept so it matches every name it can reach.
//
// It fails closed. Whatever it cannot prove is reported as Opaque with a
// reason: a command name built from a variable or a substitution, eval or
// a shell string that is not literal, a program a shell or interpreter reads
// from a pipe, a file it writes itself or a substitution, inline code for an
// interpreter (python -c, perl -e, node -e, awk programs that call system,
// sed's e command), options of other programs that run commands (tar
// --to-command, rsync -e, ssh -o ProxyCommand, git -c core.*, vim -c) when
// not literal, input the parser rejects, and nesting deeper than MaxDepth.
//
// Effect categories (Catalog) and the read-only list (ReadOnly) are sets of
// command patterns over the analysis; see Pattern for their syntax. Every
// program on the built-in read-only list also has an option table from its
// manual (optTable): its options are read as the program reads them (GNU
// unique prefixes, combined short flags with attached values, --opt=value,
// options after operands), the ones that write, run a program or change the
// host are marked, and an option the table does not know keeps the line
// off the read-only list. A login or interactive shell, and a builtin that
// evaluates an array subscript (test -v 'a[$(cmd)]'), count as running code
// (Analysis.Evaluates).
//
// What it does not see: what a program does inside itself (a script file
// already on the target, a binary named like a harmless one), and which file
// a name resolves to on the target (a rule on "rm" matches rm wherever it is
// called from, but not a copy of rm under another name made earlier).
package shellscan
