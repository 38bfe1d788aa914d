package cmdprefix

import (
	"path"
	"regexp"
	"slices"
	"strings"
)

// wrappers run another program, or shell code, given as their arguments, or
// change the shell itself: a grant for them is a grant for anything, so they
// never match a prefix and are never proposed.
var wrappers = map[string]bool{
	"bash": true, "sh": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "fish": true,
	"csh": true, "tcsh": true, "busybox": true, "toybox": true,
	"eval": true, "exec": true, "command": true, "builtin": true, "source": true, ".": true,
	"env": true, "xargs": true, "timeout": true, "nice": true, "nohup": true, "setsid": true,
	"stdbuf": true, "time": true, "sudo": true, "su": true, "doas": true, "runuser": true,
	"chroot": true, "unshare": true, "nsenter": true, "flock": true, "parallel": true,
	"watch": true, "strace": true, "ltrace": true, "gdb": true, "script": true, "ionice": true,
	"taskset": true, "chrt": true, "sg": true, "newgrp": true, "systemd-run": true,
	"firejail": true, "bwrap": true, "trap": true, "alias": true, "unalias": true,
	"declare": true, "typeset": true, "export": true, "readonly": true, "local": true,
	"set": true, "shopt": true, "enable": true, "hash": true, "coproc": true, "let": true,
	"npx": true, "bunx": true, "pnpx": true, "uvx": true, "pipx": true,
	"awk": true, "gawk": true, "mawk": true, "nawk": true,
	"vi": true, "vim": true, "nvim": true, "emacs": true, "nano": true, "ex": true, "ed": true,
	"expect": true, "tclsh": true, "wish": true, "osascript": true,
}

// interpreters run code given inline with these flags.
var interpreters = map[string][]string{
	"python": {"-c"}, "python2": {"-c"}, "python3": {"-c"}, "pypy": {"-c"}, "pypy3": {"-c"},
	"perl": {"-e", "-E", "-n", "-p", "-i", "-M"}, "ruby": {"-e", "-n", "-p", "-i", "-r"},
	"node":   {"-e", "--eval", "-p", "--print", "-r", "--require", "--import", "--loader"},
	"nodejs": {"-e", "--eval", "-p", "--print", "-r", "--require"},
	"deno":   {"eval"}, "bun": {"-e", "--eval", "x"},
	"php": {"-r", "-B", "-R", "-E", "-F"}, "lua": {"-e", "-l"}, "Rscript": {"-e"},
}

// rule lists, for one program, the arguments known to run other programs,
// write where they should not, or load code.
type rule struct {
	flags []string // long or short flags, matched exactly or as flag=value
	// letters are short flags that may be clustered ("-ni" holds -i).
	letters string
	// beforeSub: any flag before the first non-flag word asks (git -c,
	// git -C, git --exec-path...).
	beforeSub bool
	// ownSub are subcommands that ask unless the granted prefix names them.
	ownSub []string
	// pairs are subcommand + word sequences that always ask.
	pairs [][2]string
	// check is a program-specific test on the arguments.
	check func(args []string) bool
}

var rules = map[string]rule{
	"find":   {flags: []string{"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}},
	"fd":     {flags: []string{"-x", "--exec", "-X", "--exec-batch"}, letters: "xX"},
	"fdfind": {flags: []string{"-x", "--exec", "-X", "--exec-batch"}, letters: "xX"},
	"rg":     {flags: []string{"--pre", "--pre-glob", "-z", "--search-zip", "--hostname-bin"}, letters: "z"},
	"git": {
		beforeSub: true,
		flags: []string{"--upload-pack", "--receive-pack", "--exec", "-x", "--extcmd", "-O", "--open-files-in-pager",
			"--ext-diff", "--output", "--template", "--separate-git-dir", "--config", "--config-env", "--to-cmd",
			"--cc-cmd", "--sendmail-cmd", "--smtp-server", "--exec-path", "--git-dir", "--work-tree", "--textconv"},
		ownSub: []string{"config", "submodule", "bisect", "filter-branch", "send-email", "daemon", "instaweb",
			"credential", "difftool", "mergetool", "hook", "clone", "archive", "fetch", "pull", "push", "remote", "ls-remote",
			"help", "web--browse"},
		pairs: [][2]string{{"submodule", "foreach"}, {"bisect", "run"}, {"rebase", "-x"}, {"rebase", "--exec"}},
		check: gitUploadPack,
	},
	"sed":    {flags: []string{"-i", "--in-place", "-f", "--file", "-s", "--separate"}, letters: "if", check: sedScript},
	"gsed":   {flags: []string{"-i", "--in-place", "-f", "--file"}, letters: "if", check: sedScript},
	"tar":    {flags: []string{"--to-command", "-I", "--use-compress-program", "--checkpoint-action", "--info-script", "--new-volume-script", "-F", "--rsh-command", "--rmt-command"}, letters: "IF"},
	"zip":    {flags: []string{"-TT", "--unzip-command"}},
	"rsync":  {flags: []string{"-e", "--rsh", "--rsync-path"}, letters: "e"},
	"ssh":    {flags: []string{"-o", "-F", "-S"}, letters: "oF"},
	"scp":    {flags: []string{"-o", "-F", "-S"}, letters: "oFS"},
	"go":     {flags: []string{"-exec", "--exec", "-toolexec", "--toolexec", "-overlay", "--overlay"}, ownSub: []string{"generate", "env", "tool", "run", "get", "install"}},
	"cargo":  {flags: []string{"--config", "-Z"}, ownSub: []string{"install", "publish", "login"}},
	"make":   {flags: []string{"-f", "--file", "--makefile", "--eval", "-E", "-e", "--environment-overrides", "-C", "--directory"}, letters: "fEeC", check: hasAssignment},
	"gmake":  {flags: []string{"-f", "--file", "--makefile", "--eval", "-E", "-e", "-C", "--directory"}, letters: "fEeC", check: hasAssignment},
	"npm":    {flags: []string{"--script-shell", "--node-options"}, ownSub: []string{"exec", "x", "explore", "install", "i", "add", "ci", "publish", "login", "adduser", "config", "set"}},
	"pip":    {ownSub: []string{"install", "download", "uninstall", "config"}},
	"pip3":   {ownSub: []string{"install", "download", "uninstall", "config"}},
	"pnpm":   {flags: []string{"--script-shell"}, ownSub: []string{"exec", "dlx", "install", "i", "add", "publish", "config"}},
	"yarn":   {flags: []string{"--script-shell"}, ownSub: []string{"exec", "dlx", "add", "install", "publish", "config"}},
	"sort":   {flags: []string{"--compress-program"}},
	"man":    {flags: []string{"-P", "--pager", "-H", "--html"}, letters: "PH"},
	"less":   {check: plusCommand},
	"more":   {check: plusCommand},
	"pytest": {flags: []string{"-p"}},
	"docker": {ownSub: []string{"run", "exec", "compose", "build"}},
}

// execFlag catches long flags that name a program to run, whatever the
// tool: --pre, --to-command, --use-compress-program, --script-shell...
var execFlag = regexp.MustCompile(`^--?[a-z0-9-]*(exec|command|cmd|pager|editor|program|shell|hook|script|interpreter|wrapper|runner|plugin|preprocessor|helper)[a-z0-9-]*(=|$)`)

// dangerous reports whether words (a parsed command) carry a flag, a
// subcommand or a program that asks again whatever the grant, given the
// number of words the granted prefix covers.
func dangerous(words []string, prefixLen int) bool {
	prog := path.Base(words[0])
	if wrappers[prog] {
		return true
	}
	args := words[1:]
	// python3 -m pytest ...: the module's own rules apply to its arguments.
	if _, ok := interpreters[prog]; ok {
		if i := slices.Index(args, "-m"); i >= 0 && i+1 < len(args) {
			if _, has := rules[args[i+1]]; has && dangerous(args[i+1:], max(prefixLen-i-1, 0)) {
				return true
			}
		}
	}
	if fl, ok := interpreters[prog]; ok {
		// Interpreter options come before the script or "-m module";
		// what follows belongs to the program that runs.
		for _, a := range args {
			if a == "-m" || !strings.HasPrefix(a, "-") {
				break
			}
			if hasFlag(a, fl) || (len(a) > 2 && a[1] != '-' && strings.ContainsAny(a[1:], "ceEnpir")) {
				return true
			}
		}
	}
	for _, a := range args {
		if execFlag.MatchString(a) {
			return true
		}
	}
	r, ok := rules[prog]
	if !ok {
		return false
	}
	sub, subAt := "", -1
	for i, a := range args {
		if !strings.HasPrefix(a, "-") {
			sub, subAt = a, i
			break
		}
		if r.beforeSub {
			return true
		}
	}
	if subAt >= 0 && slices.Contains(r.ownSub, sub) && prefixLen < subAt+2 {
		return true
	}
	for _, p := range r.pairs {
		if sub == p[0] && slices.Contains(args[subAt+1:], p[1]) {
			return true
		}
	}
	for _, a := range args {
		if hasFlag(a, r.flags) || hasLetter(a, r.letters) {
			return true
		}
	}
	return r.check != nil && r.check(args)
}

// hasFlag matches a against flags exactly or as flag=value; a short flag
// also matches with its value attached (-Ifoo).
func hasFlag(a string, flags []string) bool {
	for _, f := range flags {
		if a == f || strings.HasPrefix(a, f+"=") {
			return true
		}
		if len(f) == 2 && f[0] == '-' && strings.HasPrefix(a, f) && !strings.HasPrefix(a, "--") {
			return true
		}
	}
	return false
}

// hasLetter reports whether a short-flag cluster (-abc) holds one of letters.
func hasLetter(a, letters string) bool {
	if letters == "" || len(a) < 2 || a[0] != '-' || a[1] == '-' {
		return false
	}
	return strings.ContainsAny(a[1:], letters)
}

// sedScript: a sed script can run commands (e) and write files (w, W, and
// the w flag of s///). Rather than parse sed, any script holding those
// letters asks.
func sedScript(args []string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-e" || a == "--expression" {
			if i+1 < len(args) && strings.ContainsAny(args[i+1], "ewW") {
				return true
			}
			i++
			continue
		}
		if strings.HasPrefix(a, "--expression=") && strings.ContainsAny(a, "ewW") {
			return true
		}
		if !strings.HasPrefix(a, "-") {
			// The first operand is the script unless -e gave one.
			if !slices.ContainsFunc(args, func(x string) bool { return x == "-e" || strings.HasPrefix(x, "--expression") }) {
				return strings.ContainsAny(a, "ewW")
			}
			return false
		}
	}
	return false
}

// hasAssignment: make VAR=value overrides (SHELL=, CC=) can run anything.
func hasAssignment(args []string) bool {
	return slices.ContainsFunc(args, func(a string) bool { return !strings.HasPrefix(a, "-") && strings.Contains(a, "=") })
}

// plusCommand: less and more take commands as +cmd.
func plusCommand(args []string) bool {
	return slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "+") })
}

// gitUploadPack: clone -u names the upload-pack program.
func gitUploadPack(args []string) bool {
	for i, a := range args {
		if a == "clone" {
			return slices.ContainsFunc(args[i+1:], func(x string) bool { return x == "-u" || strings.HasPrefix(x, "-u") && !strings.HasPrefix(x, "--") })
		}
	}
	return false
}
