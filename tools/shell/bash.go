package shell

import (
	"context"
	"errors"
	"fmt"
	"time"

	"staage/tools"
	"staage/tools/shell/cmdprefix"
	"staage/tools/shell/sandbox"
)

// bashArgs are the arguments of one bash call.
type bashArgs struct {
	Command        string `json:"command"`
	TimeoutSeconds int    `json:"timeoutSeconds,omitempty"`
}

// Output is the payload of a command that exited 0.
type Output struct {
	ExitCode   int    `json:"exitCode"`
	Output     string `json:"output"`
	DurationMs int64  `json:"durationMs"`
	Sandbox    string `json:"sandbox"`
	tools.Bounds
}

type bash struct {
	deps Deps
}

var (
	_ tools.Handler       = (*bash)(nil)
	_ tools.Previewer     = (*bash)(nil)
	_ tools.PrefixGranter = (*bash)(nil)
)

func (b *bash) decode(call tools.Call) (bashArgs, *tools.Refusal) {
	var a bashArgs
	if err := call.Decode(&a); err != nil || a.Command == "" {
		return a, tools.Refuse(tools.ArgsInvalid, "bash needs a command")
	}
	return a, nil
}

// Run executes the command under the sandbox.
func (b *bash) Run(ctx context.Context, call tools.Call) tools.Result {
	a, ref := b.decode(call)
	if ref != nil {
		return ref
	}
	timeout := b.deps.Timeout
	if a.TimeoutSeconds > 0 {
		timeout = min(time.Duration(a.TimeoutSeconds)*time.Second, MaxTimeout)
	}
	sb := b.deps.Sandbox
	res, err := sb.Run(ctx, sandbox.Exec{
		Workspace: b.deps.Workspace,
		Argv:      []string{"/bin/bash", "-lc", a.Command},
		Env:       b.deps.Env,
		Timeout:   timeout,
	})
	mode := string(sb.Mode())
	if err != nil {
		var se *sandbox.SetupError
		if errors.As(err, &se) {
			return tools.Refuse(tools.BashSandbox, "the sandbox could not be set up; the command did not run: "+se.Msg).
				With("sandbox", sb.Describe())
		}
		return tools.Refuse(tools.BashSandbox, "the command could not be started: "+err.Error()).With("sandbox", sb.Describe())
	}
	bounds := tools.Bounds{Truncated: res.Truncated, ClippedLines: res.ClippedLines}
	switch {
	case res.Cancelled:
		return tools.Refuse(tools.ToolCancelled, "the command was cancelled; it and everything it started were killed").
			With("output", res.Output).With("clippedLines", res.ClippedLines)
	case res.TimedOut:
		return tools.Refuse(tools.BashTimeout, fmt.Sprintf("killed after %s, with everything it started", timeout)).
			With("timeoutSeconds", int(timeout/time.Second)).With("output", res.Output).
			With("clippedLines", res.ClippedLines).With("sandbox", mode)
	case res.ExitCode != 0:
		msg := fmt.Sprintf("exit code %d", res.ExitCode)
		if res.Signal != "" {
			msg = "killed by signal: " + res.Signal
		}
		r := tools.Refuse(tools.BashExit, msg).
			With("exitCode", res.ExitCode).With("output", res.Output).
			With("clippedLines", res.ClippedLines).With("sandbox", mode)
		if res.Signal != "" {
			r = r.With("signal", res.Signal)
		}
		return r
	}
	return tools.Ok{Payload: Output{ExitCode: 0, Output: res.Output, DurationMs: res.Duration.Milliseconds(), Sandbox: mode, Bounds: bounds}}
}

// Preview shows the command exactly as it will run, where, and under what.
func (b *bash) Preview(_ context.Context, call tools.Call) (tools.Preview, error) {
	a, ref := b.decode(call)
	if ref != nil {
		return nil, ref
	}
	return tools.CommandPreview{
		Command: a.Command,
		Workdir: b.deps.Workspace,
		Sandbox: b.deps.Sandbox.Describe(),
		Network: b.deps.Sandbox.Network(),
	}, nil
}

// PrefixCandidates proposes the prefixes the operator may grant.
func (b *bash) PrefixCandidates(call tools.Call) []string {
	a, ref := b.decode(call)
	if ref != nil {
		return nil
	}
	return cmdprefix.Candidates(a.Command)
}

// MatchesPrefix reports whether a grant for prefix covers the call.
func (b *bash) MatchesPrefix(call tools.Call, prefix string) bool {
	a, ref := b.decode(call)
	if ref != nil {
		return false
	}
	return cmdprefix.Matches(a.Command, prefix)
}
