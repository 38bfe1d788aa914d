package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"

	"staage/agent"
	"staage/ui/sanitize"
)

// runExec runs one headless turn. Nobody can approve: REQUIRED calls that no
// --auto class or standing grant covers are denied. Exit 0 only when the turn
// completed.
func runExec(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var opts bootOptions
	fs := flag.NewFlagSet("staage exec", flag.ContinueOnError)
	fs.SetOutput(stderr)
	opts.register(fs)
	fs.BoolVar(&opts.JSON, "json", false, "print every event as one JSON object per line on stdout")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: staage exec [flags] PROMPT")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return &exitError{code: 2}
	}
	opts.headless = true
	prompt := strings.TrimSpace(strings.Join(fs.Args(), " "))
	if prompt == "" && !opts.Continue && opts.Resume == "" {
		return &exitError{code: 2, msg: "exec needs a prompt: staage exec [flags] PROMPT"}
	}

	out := &execPrinter{w: stdout, json: opts.JSON}
	rt, err := compose(ctx, opts, nil, out)
	if err != nil {
		return err
	}
	defer rt.Close()
	if !opts.JSON {
		fmt.Fprintf(stderr, "staage exec · %s · sandbox: %s · %s\n", rt.ProviderName, rt.Sandbox, rt.Workspace)
		for _, line := range rt.BootReport {
			fmt.Fprintln(stderr, "  "+sanitize.Line(line))
		}
	}
	if prompt == "" {
		// Resume without a new prompt: the restored state is journaled;
		// nothing else to do.
		return nil
	}
	td, err := rt.Session.Run(ctx, agent.MainLane, prompt)
	if err != nil {
		return err
	}
	if werr := out.err(); werr != nil {
		return &exitError{code: 1, msg: "writing output: " + werr.Error()}
	}
	switch td.Stop {
	case agent.StopEndTurn:
		return nil
	case agent.StopInterrupted:
		return &exitError{code: 130, msg: "the turn was interrupted"}
	default:
		return &exitError{code: 1, msg: "the turn did not complete: " + td.Stop + out.lastError()}
	}
}

// execPrinter renders the event stream headless: JSON lines, or readable
// text with assistant text on stdout.
type execPrinter struct {
	w    io.Writer
	json bool

	mu      sync.Mutex
	werr    error
	lastErr string
	midLine bool
}

func (p *execPrinter) Publish(e agent.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if er, ok := e.(agent.Error); ok {
		p.lastErr = er.Message
	}
	if p.werr != nil {
		return
	}
	if p.json {
		b, err := agent.EncodeEvent(e)
		if err != nil {
			p.werr = err
			return
		}
		_, p.werr = p.w.Write(append(b, '\n'))
		return
	}
	p.text(e)
}

func (p *execPrinter) text(e agent.Event) {
	line := func(format string, a ...any) {
		if p.midLine {
			fmt.Fprintln(p.w)
			p.midLine = false
		}
		_, p.werr = fmt.Fprintf(p.w, format+"\n", a...)
	}
	switch e := e.(type) {
	case agent.TextDelta:
		t := sanitize.Text(e.Text)
		if t != "" {
			_, p.werr = io.WriteString(p.w, t)
			p.midLine = !strings.HasSuffix(t, "\n")
		}
	case agent.ToolCall:
		line("→ %s %s", sanitize.Line(e.Tool), sanitize.Line(clip(string(e.Input), 160)))
	case agent.ApprovalDecided:
		if e.Decision != "approved" {
			line("  ✗ %s (%s)", e.Decision, e.Scope)
		}
	case agent.ToolResult:
		if e.OK {
			line("  ✓ ok")
		} else {
			line("  ✗ %s: %s", e.Refusal, sanitize.Line(clip(e.Message, 200)))
		}
	case agent.PlanChanged:
		var parts []string
		for _, s := range e.Steps {
			parts = append(parts, s.Status+": "+sanitize.Line(s.Title))
		}
		line("plan: %s", strings.Join(parts, " · "))
	case agent.DeskChanged:
		line("desk: %d bytes", len(e.Page))
	case agent.Error:
		line("error: %s", sanitize.Line(e.Message))
	case agent.Warning:
		line("warning: %s", sanitize.Line(e.Message))
	case agent.TurnDone:
		line("— %s", e.Stop)
	}
}

func (p *execPrinter) err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.werr
}

func (p *execPrinter) lastError() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lastErr == "" {
		return ""
	}
	return " (" + sanitize.Line(clip(p.lastErr, 200)) + ")"
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
