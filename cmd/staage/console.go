package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"staage/agent"
	"staage/ui"
	"staage/ui/app"
	"staage/ui/status"
)

// turnDrain bounds how long the console waits, after the program exits,
// for an interrupted turn to wind down before the runtime is closed.
const turnDrain = 3 * time.Second

// runConsole runs the interactive console: the bridge is both the approver
// and the event sink of the composed runtime, and the Bubble Tea program
// renders what it forwards.
func runConsole(ctx context.Context, opts bootOptions) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	bridge := ui.NewBridge()
	rt, err := compose(ctx, opts, bridge, bridge)
	if err != nil {
		return err
	}
	defer rt.Close()

	runner := &trackedRunner{r: rt.Session}
	cfg := app.Config{
		Runner: runner,
		Info: status.Info{
			Model: rt.ProviderName, Sandbox: rt.Sandbox,
			Workspace: homeRelative(rt.Workspace), Demo: rt.Demo,
		},
		BootReport: rt.BootReport,
		History:    rt.History,
		Env:        app.EnvFromOS(),
		Notify:     app.NotifySupported(),
		Context:    ctx,
		// alt+s shows what the model is told, AGENTS.md included.
		SystemPrompt: rt.System,
	}
	if rt.Demo {
		cfg.AutoPrompt = rt.DemoPrompt
	}
	if rt.Restored != nil {
		cfg.BootReport = append(cfg.BootReport, rt.Restored.Notes...)
	}
	p := tea.NewProgram(app.New(cfg), tea.WithContext(ctx))
	bridge.Attach(p)
	_, err = p.Run()
	// Interrupt whatever still runs, release blocked approvals, and give
	// the turn a moment to record its end before the journal closes.
	cancel()
	bridge.Close()
	runner.wait(turnDrain)
	if errors.Is(err, tea.ErrProgramKilled) {
		return nil
	}
	return err
}

// trackedRunner counts turns in flight so the console can wait for them.
type trackedRunner struct {
	r  app.Runner
	wg sync.WaitGroup
}

func (t *trackedRunner) Run(ctx context.Context, lane, prompt string) (agent.TurnDone, error) {
	t.wg.Add(1)
	defer t.wg.Done()
	return t.r.Run(ctx, lane, prompt)
}

func (t *trackedRunner) wait(d time.Duration) {
	done := make(chan struct{})
	go func() { t.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// homeRelative shortens a path under $HOME to ~/….
func homeRelative(p string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" || p == "" {
		return p
	}
	if rel, err := filepath.Rel(home, p); err == nil && !strings.HasPrefix(rel, "..") {
		if rel == "." {
			return "~"
		}
		return "~/" + rel
	}
	return p
}
