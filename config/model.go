package config

import (
	"fmt"
	"strings"
)

// Kind is the wire a provider speaks.
type Kind string

// Wires.
const (
	KindAnthropic Kind = "anthropic"
	KindOpenAI    Kind = "openai" // Chat Completions, OpenAI or compatible
)

// ProviderSpec describes one provider name a model string may start with.
type ProviderSpec struct {
	Name    string
	Kind    Kind
	BaseURL string // default; empty means it must be configured
	KeyEnv  string // the environment variable the key comes from by default
	// Local servers take no key: none is ever sent to them unless the
	// operator configures key_command or key_env for them.
	Local bool
	// LegacyMaxTokens: the server reads max_tokens, not max_completion_tokens.
	LegacyMaxTokens bool
	// BaseURLEnv is the usual environment variable for the base URL.
	BaseURLEnv string
}

// Providers lists the provider names a model string may start with.
func Providers() []ProviderSpec {
	return []ProviderSpec{
		{Name: "anthropic", Kind: KindAnthropic, BaseURL: "https://api.anthropic.com/", KeyEnv: "ANTHROPIC_API_KEY", BaseURLEnv: "ANTHROPIC_BASE_URL"},
		{Name: "openai", Kind: KindOpenAI, BaseURL: "https://api.openai.com/v1/", KeyEnv: "OPENAI_API_KEY", BaseURLEnv: "OPENAI_BASE_URL"},
		{Name: "openrouter", Kind: KindOpenAI, BaseURL: "https://openrouter.ai/api/v1/", KeyEnv: "OPENROUTER_API_KEY", LegacyMaxTokens: true},
		{Name: "ollama", Kind: KindOpenAI, BaseURL: "http://localhost:11434/v1/", Local: true, LegacyMaxTokens: true},
		{Name: "llamacpp", Kind: KindOpenAI, BaseURL: "http://localhost:8080/v1/", Local: true, LegacyMaxTokens: true},
		{Name: "lmstudio", Kind: KindOpenAI, BaseURL: "http://localhost:1234/v1/", Local: true, LegacyMaxTokens: true},
		{Name: "vllm", Kind: KindOpenAI, BaseURL: "http://localhost:8000/v1/", Local: true, LegacyMaxTokens: true},
		// Any other OpenAI-compatible server: base_url is required, and a
		// key only if key_command or key_env names one.
		{Name: "openai-compatible", Kind: KindOpenAI, Local: true, LegacyMaxTokens: true},
	}
}

// LookupProvider finds a provider by name.
func LookupProvider(name string) (ProviderSpec, bool) {
	for _, p := range Providers() {
		if p.Name == name {
			return p, true
		}
	}
	return ProviderSpec{}, false
}

// ParseModel splits "provider/model". The model part may hold more slashes
// (OpenRouter's "openrouter/anthropic/claude-sonnet-4.5"). A bare model id
// is placed by its family: claude-* on Anthropic, gpt-*, o1/o3/o4-* on
// OpenAI; anything else must name its provider.
func ParseModel(s string) (provider, model string, err error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", "", nil
	}
	if p, m, ok := strings.Cut(s, "/"); ok {
		if _, known := LookupProvider(p); known {
			if strings.TrimSpace(m) == "" {
				return "", "", fmt.Errorf("model %q: no model after %q", s, p+"/")
			}
			return p, m, nil
		}
	}
	switch {
	case strings.HasPrefix(s, "claude-"):
		return "anthropic", s, nil
	case strings.HasPrefix(s, "gpt-"), strings.HasPrefix(s, "o1"), strings.HasPrefix(s, "o3"), strings.HasPrefix(s, "o4"):
		return "openai", s, nil
	}
	var names []string
	for _, p := range Providers() {
		names = append(names, p.Name+"/…")
	}
	return "", "", fmt.Errorf("model %q: say which provider serves it: %s", s, strings.Join(names, ", "))
}
