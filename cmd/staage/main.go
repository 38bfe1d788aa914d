// Command staage is a terminal operator console for AI coding agents.
//
//	staage [flags]                 the console (the offline demo when no model is configured)
//	staage exec [flags] PROMPT     one headless turn; --json streams events as JSON lines
//	staage tools [--json]          the composed catalog and the boot report
//	staage sessions [list|export]  journaled sessions
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"staage/tools/shell/sandbox"
	"staage/ui/picker"
)

// bootOptions is what the flags (and later the config) decide for one run.
type bootOptions struct {
	Workspace    string
	Script       string
	Demo         bool
	Model        string
	BaseURL      string
	MaxTokens    int
	KeyCommand   string
	Auto         string
	Sandbox      string
	Scratch      string
	Delegate     bool
	Worktrees    string
	DevCheck     bool
	RequireRails bool
	Continue     bool
	Resume       string
	JSON         bool
	MaxSteps     int
	BashTimeout  time.Duration
	Config       string
	// NoJournal turns the session journal off (tests of unrelated parts).
	NoJournal bool
	// headless is set by exec: nobody is at a terminal to approve.
	headless bool
}

func (o *bootOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&o.Workspace, "workspace", "", "the workspace `dir` (default: the current directory)")
	fs.StringVar(&o.Script, "script", "", "replay a scripted conversation from `file` instead of calling a model")
	fs.BoolVar(&o.Demo, "demo", false, "run the embedded offline demo in a temporary copy of a sample workspace")
	fs.StringVar(&o.Model, "model", "", "the model, as provider/name (anthropic/…, openai/…, ollama/…, openai-compatible/…)")
	fs.StringVar(&o.BaseURL, "base-url", "", "the provider's base `url` (OpenAI-compatible servers)")
	fs.IntVar(&o.MaxTokens, "max-tokens", 0, "the most tokens one response may use")
	fs.StringVar(&o.KeyCommand, "key-command", "", "a shell `command` that prints the API key (instead of the environment variable)")
	fs.StringVar(&o.Auto, "auto", "", "pre-grant effect `classes` for the session: read,idempotent-write,reversible,irreversible or all")
	fs.StringVar(&o.Sandbox, "sandbox", "", "bash containment: product, bench or off (default: the strongest this machine honours)")
	fs.StringVar(&o.Scratch, "scratch", "", "the `dir` scratch_read may read")
	fs.BoolVar(&o.Delegate, "delegate", false, "offer task: child threads in their own lanes")
	fs.StringVar(&o.Worktrees, "worktrees", "", "the `dir` for write children's git worktrees (enables apply_change)")
	fs.BoolVar(&o.DevCheck, "dev-check", false, "offer dev_check (gate scripts in a disposable worktree) in place of bash")
	fs.BoolVar(&o.RequireRails, "require-rails", false, "refuse to start when a rail's credentials are missing")
	fs.BoolVar(&o.Continue, "continue", false, "continue the latest session of this workspace")
	fs.StringVar(&o.Resume, "resume", "", "resume the session `id` (without an id the console opens a picker)")
	fs.IntVar(&o.MaxSteps, "max-steps", 0, "model calls allowed per turn (default 50)")
	fs.DurationVar(&o.BashTimeout, "bash-timeout", 2*time.Minute, "how long one bash command may run")
	fs.StringVar(&o.Config, "config", "", "the config `file` (default: $XDG_CONFIG_HOME/staage/config.toml)")
}

func main() {
	if handled, code := sandbox.HelperMain(); handled {
		os.Exit(code)
	}
	// SIGHUP too: a closed terminal must still close the journal cleanly.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// exitError carries an exit code with its one-line reason.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var err error
	sub := ""
	if len(args) > 0 {
		sub = args[0]
	}
	switch sub {
	case "exec":
		err = runExec(ctx, args[1:], stdout, stderr)
	case "tools":
		err = runTools(ctx, args[1:], stdout, stderr)
	case "sessions":
		err = runSessions(ctx, args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		usage(stdout)
		return 0
	default:
		var opts bootOptions
		args, pick := takeBareResume(args)
		fs := flag.NewFlagSet("staage", flag.ContinueOnError)
		fs.SetOutput(stderr)
		opts.register(fs)
		fs.Usage = func() { usage(stderr); fs.PrintDefaults() }
		if perr := fs.Parse(args); perr != nil {
			if errors.Is(perr, flag.ErrHelp) {
				return 0
			}
			return 2
		}
		if fs.NArg() > 0 {
			fmt.Fprintf(stderr, "staage: unexpected argument %q (did you mean `staage exec %s`?)\n", fs.Arg(0), fs.Arg(0))
			return 2
		}
		if pick {
			if opts.Resume, err = pickSession(ctx, opts); err != nil {
				break
			}
		}
		err = runConsole(ctx, opts)
	}
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(stderr, "staage:", ee.msg)
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "staage:", err)
	return 1
}

func usage(w io.Writer) {
	fmt.Fprint(w, `staage — a terminal operator console for AI coding agents

  staage [flags]                  the console (offline demo when no model is configured)
  staage exec [flags] PROMPT      run one turn headless; --json prints events as JSON lines
  staage tools [flags] [--json]   the composed tool catalog and the boot report
  staage sessions [list|export ID]

`)
}

// takeBareResume removes a --resume given without an ID (last, or followed
// by another flag): the console then opens the session picker. The flag
// package alone would demand a value.
func takeBareResume(args []string) ([]string, bool) {
	for i, a := range args {
		if a != "--resume" && a != "-resume" {
			continue
		}
		if i+1 == len(args) || strings.HasPrefix(args[i+1], "-") {
			rest := append(append([]string(nil), args[:i]...), args[i+1:]...)
			return rest, true
		}
	}
	return args, false
}

// pickSession runs the session picker and returns the chosen ID.
func pickSession(ctx context.Context, opts bootOptions) (string, error) {
	ws := opts.Workspace
	if ws == "" {
		ws, _ = os.Getwd()
	}
	id, err := picker.PickSession(ctx, ws, picker.Options{})
	if errors.Is(err, picker.ErrCancelled) {
		return "", &exitError{code: 0}
	}
	return id, err
}
