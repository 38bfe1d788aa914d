package config

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"staage/agent"
	"staage/agent/provider/anthropic"
	"staage/agent/provider/openai"
	"staage/agent/provider/wire"
)

// LocalIdleTimeout is the idle timeout for local servers when none is
// configured.
const LocalIdleTimeout = 5 * time.Minute

// NewProvider builds the provider cfg describes. It returns ErrNoModel
// when no model is configured (boot then runs the offline demo), and a
// clear error when a hosted provider has no key.
func NewProvider(ctx context.Context, cfg Config) (agent.Provider, error) {
	return newProvider(cfg, nil)
}

// NewProviderWithClient is NewProvider with an HTTP client (tests, proxies).
func NewProviderWithClient(ctx context.Context, cfg Config, client *http.Client) (agent.Provider, error) {
	return newProvider(cfg, client)
}

func newProvider(cfg Config, client *http.Client) (agent.Provider, error) {
	if cfg.Provider == "" {
		return nil, ErrNoModel
	}
	spec, ok := LookupProvider(cfg.Provider)
	if !ok {
		return nil, fmt.Errorf("unknown provider %q", cfg.Provider)
	}
	if !spec.Local && !cfg.Key.IsSet() {
		return nil, fmt.Errorf("model %s needs an API key: set %s, or key_command in [providers.%s] of %s",
			cfg.Label(), spec.KeyEnv, spec.Name, DefaultUserFile(nil))
	}
	retry := wire.Policy{MaxAttempts: cfg.MaxAttempts, IdleTimeout: cfg.IdleTimeout}
	if retry.IdleTimeout == 0 && spec.Local {
		// A local server may load a model or read a long prompt for
		// minutes before its first byte; hosted APIs send pings.
		retry.IdleTimeout = LocalIdleTimeout
	}
	switch spec.Kind {
	case KindAnthropic:
		p, err := anthropic.New(anthropic.Options{
			APIKey: cfg.Key.Reveal(), BaseURL: cfg.BaseURL, Model: cfg.Model, MaxTokens: cfg.MaxTokens,
			ThinkingBudget: cfg.ThinkingBudget, AdaptiveThinking: cfg.AdaptiveThinking,
			HTTPClient: client, Retry: retry,
		})
		if err != nil {
			return nil, err // never a typed nil inside the interface
		}
		return p, nil
	case KindOpenAI:
		p, err := openai.New(openai.Options{
			APIKey: cfg.Key.Reveal(), BaseURL: cfg.BaseURL, Model: cfg.Model, MaxTokens: cfg.MaxTokens,
			LegacyMaxTokens: spec.LegacyMaxTokens, Label: spec.Name,
			HTTPClient: client, Retry: retry,
		})
		if err != nil {
			return nil, err
		}
		return p, nil
	}
	return nil, fmt.Errorf("provider %q: no wire for kind %q", cfg.Provider, spec.Kind)
}
