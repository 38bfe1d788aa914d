package main

import (
	"context"
	"errors"
	"os"

	"staage/agent"
	"staage/config"
)

// configuredModel loads the operator's configured provider (config file,
// environment, flags); nil when no model is configured.
func configuredModel(ctx context.Context, opts bootOptions) (*modelSetup, error) {
	ws := opts.Workspace
	if ws == "" {
		ws, _ = os.Getwd()
	}
	cfg, err := config.Load(ctx, config.Sources{
		UserFile: opts.Config, WorkspaceDir: ws,
		Flags: config.Flags{Model: opts.Model, BaseURL: opts.BaseURL, MaxTokens: opts.MaxTokens, KeyCommand: opts.KeyCommand},
	})
	if err != nil {
		return nil, &exitError{code: 2, msg: err.Error()}
	}
	if cfg.Provider == "" {
		return nil, nil
	}
	p, err := config.NewProvider(ctx, cfg)
	if errors.Is(err, config.ErrNoModel) {
		return nil, nil
	}
	if err != nil {
		return nil, &exitError{code: 2, msg: err.Error()}
	}
	m := &modelSetup{
		provider: p, system: config.SystemPrompt(ws), maxTokens: cfg.MaxTokens,
		close: func() {}, resumed: func([]agent.Event) {},
		lines: append([]string{"model: " + cfg.Describe()}, cfg.Warnings...),
	}
	if cfg.Key.IsSet() {
		m.secrets = []string{cfg.Key.Reveal()}
	}
	if cfg.PriceKnown {
		m.cost = cfg.Cost
	}
	return m, nil
}

func defaultSystem(opts bootOptions) string {
	ws := opts.Workspace
	if ws == "" {
		ws, _ = os.Getwd()
	}
	return config.SystemPrompt(ws)
}
