// Package proc runs one child process with the hygiene every staage tool that
// starts a program needs, whatever the sandbox: its own session (so it has no
// controlling terminal and cannot type into the console's), a deadline, the
// whole process group killed on timeout or cancel and again after it exits
// (to reap "cmd &" leftovers), and output bounded to a head and a tail with
// the clipped middle counted.
package proc

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// Spec is a program to run, fully resolved: no shell is involved here.
type Spec struct {
	Path string   // absolute path of the program
	Args []string // argv, Args[0] included
	Env  []string // the complete environment; nil means empty, never inherited
	Dir  string
	// Timeout is the deadline of the run; zero means none (only ctx).
	Timeout time.Duration
	// Limits bound the captured output.
	Limits Limits
}

// Result is what happened.
type Result struct {
	Output       string // stdout and stderr interleaved, bounded
	ExitCode     int    // -1 when killed by a signal
	Signal       string // the signal that killed it ("killed", "segmentation fault"), if one did
	TimedOut     bool
	Cancelled    bool // ctx was cancelled by the caller (not the timeout)
	ClippedLines int  // lines dropped from the middle of Output
	Truncated    bool // bytes were dropped from the middle of Output
	Duration     time.Duration
}

// waitDelay is how long Wait keeps reading output after the process exited or
// was killed: background jobs may hold the pipe open.
const waitDelay = 2 * time.Second

// Run starts spec and waits for it. The error is for failures to start or a
// broken pipe; a non-zero exit, a timeout or a cancel are reported in Result.
func Run(ctx context.Context, spec Spec) (Result, error) {
	if spec.Path == "" || len(spec.Args) == 0 {
		return Result{}, errors.New("proc: empty command")
	}
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if spec.Timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, spec.Timeout)
	}
	defer cancel()

	out := newCapture(spec.Limits)
	cmd := exec.CommandContext(runCtx, spec.Path)
	cmd.Args = spec.Args
	cmd.Env = spec.Env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.Dir = spec.Dir
	cmd.Stdin = nil // /dev/null
	cmd.Stdout = out
	cmd.Stderr = out // one pipe: the two streams interleave as written
	// Setsid, never Setpgid: a new session has no controlling terminal, so
	// /dev/tty and TIOCSTI cannot reach the console's terminal. The session
	// leader's pid is also the process group id we kill.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = waitDelay

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("proc: start %s: %w", spec.Path, err)
	}
	err := cmd.Wait()
	// Whatever the outcome, nothing of the group may outlive the call.
	_ = killGroup(cmd)
	res := Result{Duration: time.Since(start)}
	res.Output, res.ClippedLines, res.Truncated = out.result()
	res.ExitCode = cmd.ProcessState.ExitCode()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.Signal = ws.Signal().String()
	}
	if runCtx.Err() != nil {
		if ctx.Err() != nil {
			res.Cancelled = true
		} else {
			res.TimedOut = true
		}
	}
	var exitErr *exec.ExitError
	switch {
	case err == nil, errors.As(err, &exitErr), errors.Is(err, exec.ErrWaitDelay):
		// A background job that held the pipe open past the exit is normal.
		return res, nil
	case res.TimedOut || res.Cancelled:
		return res, nil
	default:
		return res, fmt.Errorf("proc: wait %s: %w", spec.Path, err)
	}
}

func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}
