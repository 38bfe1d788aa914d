package mcp

import (
	"context"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"staage/tools/shell/sandbox"
)

// The process side of a stdio server: its environment, its own session, its
// stderr kept (bounded) for the report, and a kill that takes its whole
// process group.

// stderrKeep is how much of a server's stderr is kept for its report line.
const stderrKeep = 2048

// tail keeps the last bytes written to it. A server's stderr goes here, never
// to the operator's terminal (the TUI owns it).
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > stderrKeep {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-stderrKeep:]...)
	}
	return len(p), nil
}

// last is the last line of stderr that says something, stripped, or "".
func (t *tail) last() string {
	t.mu.Lock()
	s := string(t.buf)
	t.mu.Unlock()
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := oneLine(lines[i]); l != "" {
			l, cut := clip(l, 200)
			if cut {
				l += "…"
			}
			return l
		}
	}
	return ""
}

// serverEnv is the console's environment without credentials (a server gets
// the keys the operator gave it in its env table, not the model's API key),
// then the configured entries, which win.
func serverEnv(console, configured []string) []string {
	out := sandbox.Scrub(console)
	seen := map[string]bool{}
	for _, kv := range configured {
		k, _, _ := strings.Cut(kv, "=")
		seen[k] = true
	}
	kept := out[:0]
	for _, kv := range out {
		if k, _, _ := strings.Cut(kv, "="); !seen[k] {
			kept = append(kept, kv)
		}
	}
	return append(kept, configured...)
}

// redactor replaces the values of the server's configured environment that
// may be credentials (by name or shape, or simply long) wherever server text
// is passed on: a server that echoes its token in an error or on stderr must
// not put it in the report, the journal or the model's context. Nil when
// there is nothing to hide.
func redactor(configured []string) *strings.Replacer {
	var pairs []string
	for _, kv := range configured {
		k, v, _ := strings.Cut(kv, "=")
		if len(v) >= 6 && (sandbox.IsSecret(k, v) || len(v) >= 16) {
			pairs = append(pairs, v, "[redacted]")
		}
	}
	if len(pairs) == 0 {
		return nil
	}
	return strings.NewReplacer(pairs...)
}

// command builds the server's process. procCtx owns its life: cancelling it
// kills the whole group. Setsid gives the server no controlling terminal, so
// it cannot type into the console's (TIOCSTI).
func command(procCtx context.Context, s Server, env []string, dir string, stderr *tail) *exec.Cmd {
	cmd := exec.CommandContext(procCtx, s.Command, s.Args...)
	cmd.Env = env
	cmd.Dir = dir
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error { return killGroup(cmd) }
	// Grandchildren may hold stderr open after the server is gone.
	cmd.WaitDelay = time.Second
	return cmd
}

// killGroup SIGKILLs the server's process group (it leads one: Setsid).
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
