package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"staage/agent/journal"
	"staage/ui/picker"
	"staage/ui/sanitize"
)

// runSessions is `staage sessions [list|export ID]`: the journaled sessions,
// newest activity first, or one session as a Markdown transcript.
func runSessions(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	sub := "list"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	switch sub {
	case "list", "ls":
		return sessionsList(ctx, args, stdout, stderr)
	case "export":
		return sessionsExport(ctx, args, stdout, stderr)
	default:
		return &exitError{code: 2, msg: fmt.Sprintf("sessions: unknown command %q (want list or export ID)", sub)}
	}
}

func sessionsFlags(name string, stderr io.Writer, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet("staage sessions "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: staage sessions "+usage)
		fs.PrintDefaults()
	}
	return fs
}

func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return &exitError{code: 0}
		}
		return &exitError{code: 2}
	}
	return nil
}

func sessionsList(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := sessionsFlags("list", stderr, "[list] [--json] [--workspace DIR]")
	asJSON := fs.Bool("json", false, "print the sessions as a JSON array")
	ws := fs.String("workspace", "", "only sessions of this workspace `dir`")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &exitError{code: 2, msg: fmt.Sprintf("sessions list: unexpected argument %q", fs.Arg(0))}
	}
	dir, err := journal.SessionsDir()
	if err != nil {
		return err
	}
	list, err := journal.List(dir)
	if err != nil {
		return err
	}
	if *ws != "" {
		want, err := filepath.Abs(*ws)
		if err != nil {
			return err
		}
		if real, err := filepath.EvalSymlinks(want); err == nil {
			want = real
		}
		kept := list[:0]
		for _, s := range list {
			if filepath.Clean(s.Workspace) == want {
				kept = append(kept, s)
			}
		}
		list = kept
	}
	if *asJSON {
		if list == nil {
			list = []journal.Summary{}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	}
	if len(list) == 0 {
		fmt.Fprintf(stdout, "no sessions in %s\n", dir)
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tLAST ACTIVITY\tSTARTED\tMODEL\tSIZE\tWORKSPACE\tFIRST PROMPT")
	now := time.Now()
	for _, s := range list {
		prompt := s.FirstPrompt
		if s.Problem != "" {
			prompt = "(" + s.Problem + ")"
		}
		started := "-"
		if !s.Started.IsZero() {
			started = s.Started.Local().Format("2006-01-02 15:04")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			cell(s.ID, 40), picker.Ago(now, s.LastActivity), started, cell(s.Provider, 32),
			picker.HumanSize(s.Size), cell(s.Workspace, 48), cell(prompt, 60))
	}
	return tw.Flush()
}

func sessionsExport(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := sessionsFlags("export", stderr, "export [-o FILE] ID")
	out := fs.String("o", "", "write the Markdown to `file` instead of stdout")
	// Accept the ID before or after the flags.
	var id string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		id, args = args[0], args[1:]
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if id == "" && fs.NArg() > 0 {
		id = fs.Arg(0)
	} else if fs.NArg() > 0 {
		return &exitError{code: 2, msg: fmt.Sprintf("sessions export: unexpected argument %q", fs.Arg(0))}
	}
	if id == "" {
		return &exitError{code: 2, msg: "sessions export needs a session id (see `staage sessions`)"}
	}
	dir, err := journal.SessionsDir()
	if err != nil {
		return err
	}
	path, err := journal.Find(dir, id)
	if err != nil {
		return &exitError{code: 2, msg: err.Error()}
	}
	r, err := journal.Read(path)
	if err != nil {
		return err
	}
	if *out == "" {
		return journal.ExportMarkdown(r, stdout)
	}
	f, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if err := journal.ExportMarkdown(r, f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// cell makes untrusted text one clipped, terminal-safe table cell.
func cell(s string, width int) string {
	s = strings.ReplaceAll(sanitize.Line(s), "\t", " ")
	if s == "" {
		return "-"
	}
	r := []rune(s)
	if len(r) > width {
		return string(r[:width-1]) + "…"
	}
	return s
}
