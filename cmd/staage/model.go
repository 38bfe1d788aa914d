package main

import (
	"context"
	"fmt"
	"os"

	"staage/agent"
	"staage/agent/provider/script"
	"staage/config"
	"staage/demo"
)

// modelSetup is the provider side of a boot.
type modelSetup struct {
	provider  agent.Provider
	system    string
	maxTokens int
	cost      func(agent.Usage) float64
	// demo is set for the offline demo, which runs in its own workspace.
	demo       bool
	demoPrompt string
	workspace  string
	close      func()
	// resumed is told the replayed events (a script continues where the
	// journal says it stopped).
	resumed func([]agent.Event)
	// lines go into the boot report (the model, config warnings).
	lines []string
	// secrets are credentials resolved from config or a key command; the
	// journal redacts them.
	secrets []string
}

// loadModel picks the provider: a --script file, the demo, a configured
// model, or — for the console only — the offline demo when nothing is
// configured.
func loadModel(ctx context.Context, opts bootOptions) (*modelSetup, error) {
	m := &modelSetup{close: func() {}, resumed: func([]agent.Event) {}}
	switch {
	case opts.Script != "":
		b, err := os.ReadFile(opts.Script)
		if err != nil {
			return nil, &exitError{code: 2, msg: fmt.Sprintf("--script: %v", err)}
		}
		p, err := script.New(b)
		if err != nil {
			return nil, &exitError{code: 2, msg: fmt.Sprintf("--script %s: %v", opts.Script, err)}
		}
		m.provider = p
		m.resumed = func(evs []agent.Event) { p.Skip(countResponses(evs)) }
		m.system = defaultSystem(opts)
		return m, nil
	case opts.Demo:
		return demoModel(ctx)
	}
	configured, err := configuredModel(ctx, opts)
	if err != nil {
		return nil, err
	}
	if configured != nil {
		return configured, nil
	}
	if opts.JSON || opts.headless {
		return nil, &exitError{code: 2, msg: "no model is configured: set one with --model (see docs/providers.md), or replay a script with --script FILE"}
	}
	return demoModel(ctx)
}

func demoModel(ctx context.Context) (*modelSetup, error) {
	dir, cleanup, err := demo.Materialize(ctx)
	if err != nil {
		return nil, fmt.Errorf("offline demo: %w", err)
	}
	p, err := script.New(demo.Script())
	if err != nil {
		cleanup()
		return nil, fmt.Errorf("offline demo script: %w", err)
	}
	return &modelSetup{
		provider: p.WithName("offline demo"), demo: true, demoPrompt: demo.Prompt(),
		workspace: dir, close: cleanup, resumed: func(evs []agent.Event) { p.Skip(countResponses(evs)) },
		// What a real model would be told in this workspace (its
		// AGENTS.md included), so alt+s shows something true.
		system: config.SystemPrompt(dir),
	}, nil
}

// countResponses counts the model responses a journal recorded.
func countResponses(evs []agent.Event) int {
	n := 0
	for _, e := range evs {
		if _, ok := e.(agent.AssistantMessage); ok {
			n++
		}
	}
	return n
}
