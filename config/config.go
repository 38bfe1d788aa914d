package config

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
)

// Config is the resolved model configuration. It is safe to print: the key
// is a Secret.
type Config struct {
	// Provider is a name from Providers(); empty when no model is
	// configured (the offline demo runs).
	Provider string
	// Model is the provider's model id (without the provider prefix).
	Model   string
	BaseURL string
	// MaxTokens per response; zero lets the provider choose its default.
	MaxTokens int
	// ThinkingBudget > 0 turns on Anthropic extended thinking.
	ThinkingBudget int
	// AdaptiveThinking asks Anthropic for adaptive thinking.
	AdaptiveThinking bool
	// Key is the API key; KeySource says where it came from
	// ("ANTHROPIC_API_KEY", "key_command", ...), never what it is.
	Key       Secret
	KeySource string
	// Price of the model, when known (PriceKnown).
	Price      Price
	PriceKnown bool
	// MaxAttempts and IdleTimeout tune the retry policy (zero: defaults).
	MaxAttempts int
	IdleTimeout time.Duration
	// Console settings from the user file only (a repository may not
	// weaken the sandbox or pre-grant effects): sandbox mode, theme, and
	// the --auto effect classes. Empty when unset; flags override them.
	Sandbox string
	Theme   string
	Auto    string
	// Warnings are things the operator must read at boot (a repository
	// config that tried to set base_url, an unknown key, ...).
	Warnings []string
	// Files lists the config files that were read.
	Files []string
}

// Label is "provider/model", what the status bar shows.
func (c Config) Label() string {
	if c.Provider == "" {
		return ""
	}
	return c.Provider + "/" + c.Model
}

// Describe is one boot line: the model, where requests go, where the key
// came from. It never contains the key.
func (c Config) Describe() string {
	if c.Provider == "" {
		return "no model configured"
	}
	s := c.Label() + " at " + c.BaseURL
	switch {
	case c.KeySource != "":
		s += " (key from " + c.KeySource + ")"
	case !c.Key.IsSet():
		s += " (no key)"
	}
	return s
}

// Flags are the command-line settings; zero values are unset.
type Flags struct {
	Model      string // --model provider/model
	BaseURL    string // --base-url
	MaxTokens  int    // --max-tokens
	KeyCommand string // --key-command
}

// Sources say where Load reads from.
type Sources struct {
	// UserFile is the operator's config; empty means the XDG path
	// ($XDG_CONFIG_HOME or ~/.config)/staage/config.toml. A missing file
	// is fine.
	UserFile string
	// WorkspaceDir holds .staage/config.toml, the repository's config
	// (restricted: see the package comment). Empty skips it.
	WorkspaceDir string
	// Env reads the environment; nil is os.Getenv.
	Env func(string) string
	// Flags from the command line.
	Flags Flags
	// RunKeyCommand runs a key_command; nil runs it with /bin/sh.
	RunKeyCommand func(ctx context.Context, command string) (string, error)
}

// File is the TOML schema of both config files.
type File struct {
	Model          string `toml:"model"`
	BaseURL        string `toml:"base_url"`
	MaxTokens      int    `toml:"max_tokens"`
	ThinkingBudget int    `toml:"thinking_budget"`
	Thinking       string `toml:"thinking"` // "adaptive" | "off" | ""
	KeyCommand     string `toml:"key_command"`
	KeyEnv         string `toml:"key_env"`
	MaxAttempts    int    `toml:"max_attempts"`
	IdleTimeout    string `toml:"idle_timeout"`
	// Sandbox, Theme and Auto are console settings (user file only).
	Sandbox string `toml:"sandbox"`
	Theme   string `toml:"theme"`
	Auto    string `toml:"auto"`
	// Providers holds per-provider settings, e.g. [providers.ollama]
	// base_url = "http://gpu-box.example:11434/v1".
	Providers map[string]ProviderFile `toml:"providers"`
	// Prices per model, keyed "provider/model" or a model id prefix.
	Prices map[string]Price `toml:"prices"`
	// MCP declares the MCP servers, [mcp.<name>] (user file only: see
	// LoadMCP; a repository's table is ignored with a warning).
	MCP map[string]MCPServerFile `toml:"mcp"`
}

// ProviderFile is one [providers.<name>] table.
type ProviderFile struct {
	BaseURL    string `toml:"base_url"`
	KeyCommand string `toml:"key_command"`
	KeyEnv     string `toml:"key_env"`
}

// ErrNoModel means no model is configured: boot runs the offline demo.
var ErrNoModel = errors.New("no model configured")

// maxConfigBytes bounds a config file read.
const maxConfigBytes = 1 << 20

// DefaultUserFile is the XDG location of the operator's config.
func DefaultUserFile(env func(string) string) string {
	if env == nil {
		env = os.Getenv
	}
	base := env("XDG_CONFIG_HOME")
	if base == "" || !filepath.IsAbs(base) {
		home := env("HOME")
		if home == "" {
			if h, err := os.UserHomeDir(); err == nil {
				home = h
			}
		}
		base = filepath.Join(home, ".config")
	}
	return filepath.Join(base, "staage", "config.toml")
}

// Load resolves the configuration. Precedence, lowest first: defaults, the
// user file, the repository file (model and token limits only), the
// environment (STAAGE_MODEL, STAAGE_BASE_URL, STAAGE_MAX_TOKENS), flags.
// Load runs a key_command when the chosen provider needs a key.
func Load(ctx context.Context, src Sources) (Config, error) {
	env := src.Env
	if env == nil {
		env = os.Getenv
	}
	var cfg Config
	userPath := src.UserFile
	if userPath == "" {
		userPath = DefaultUserFile(env)
	}
	user, found, err := readFile(userPath, &cfg.Warnings)
	if err != nil {
		return cfg, err
	}
	if found {
		cfg.Files = append(cfg.Files, userPath)
	}
	var repo File
	if src.WorkspaceDir != "" {
		rp := filepath.Join(src.WorkspaceDir, ".staage", "config.toml")
		r, found, err := readFile(rp, &cfg.Warnings)
		if err != nil {
			return cfg, err
		}
		if found {
			cfg.Files = append(cfg.Files, rp)
			repo = restrictRepo(r, rp, &cfg.Warnings)
		}
	}

	// The model and its limits: user < repo < env < flags.
	modelStr := firstNonEmpty(src.Flags.Model, env("STAAGE_MODEL"), repo.Model, user.Model)
	cfg.MaxTokens = firstPositive(src.Flags.MaxTokens, atoi(env("STAAGE_MAX_TOKENS")), repo.MaxTokens, user.MaxTokens)
	cfg.ThinkingBudget = firstPositive(repo.ThinkingBudget, user.ThinkingBudget)
	thinking := firstNonEmpty(repo.Thinking, user.Thinking)
	cfg.AdaptiveThinking = thinking == "adaptive"
	if thinking == "off" {
		cfg.ThinkingBudget = 0
	}
	cfg.MaxAttempts = user.MaxAttempts
	cfg.Sandbox, cfg.Theme, cfg.Auto = user.Sandbox, user.Theme, user.Auto
	if user.IdleTimeout != "" {
		d, err := time.ParseDuration(user.IdleTimeout)
		if err != nil || d < 0 {
			return cfg, fmt.Errorf("config %s: idle_timeout %q: want a duration such as \"90s\"", userPath, user.IdleTimeout)
		}
		cfg.IdleTimeout = d
	}

	provider, model, err := ParseModel(modelStr)
	if err != nil {
		return cfg, err
	}
	if provider == "" {
		return cfg, nil // the offline demo
	}
	spec, _ := LookupProvider(provider)
	cfg.Provider, cfg.Model = provider, model
	pf := user.Providers[provider]

	// Where requests go: the operator's sources only.
	cfg.BaseURL = firstNonEmpty(src.Flags.BaseURL, env("STAAGE_BASE_URL"), envIf(env, spec.BaseURLEnv), pf.BaseURL, user.BaseURL, spec.BaseURL)
	if cfg.BaseURL == "" {
		return cfg, fmt.Errorf("model %s: %s needs a base URL: set base_url in [providers.%s] of %s, STAAGE_BASE_URL, or --base-url",
			cfg.Label(), provider, provider, userPath)
	}
	if err := checkBaseURL(cfg.BaseURL); err != nil {
		return cfg, err
	}

	// Prices: defaults < user table.
	table := defaultPrices()
	for k, v := range user.Prices {
		table[k] = v
	}
	cfg.Price, cfg.PriceKnown = lookupPrice(table, provider, model, spec.Local)

	// The key: a flag's key command, the provider's own key_command or
	// key_env, then the top-level ones (only when the user file's model is
	// on this provider: a key meant for one provider never goes to
	// another), then the provider's usual variable. Local servers get no
	// key unless one was configured for them.
	userProvider, _, _ := ParseModel(user.Model)
	var keyCmd, keyEnv string
	keyCmd = firstNonEmpty(src.Flags.KeyCommand, pf.KeyCommand)
	keyEnv = pf.KeyEnv
	if userProvider == provider {
		keyCmd = firstNonEmpty(keyCmd, user.KeyCommand)
		keyEnv = firstNonEmpty(keyEnv, user.KeyEnv)
	}
	if !spec.Local {
		keyEnv = firstNonEmpty(keyEnv, spec.KeyEnv)
	}
	switch {
	case keyCmd != "":
		run := src.RunKeyCommand
		if run == nil {
			run = runKeyCommand
		}
		key, err := run(ctx, keyCmd)
		if err != nil {
			return cfg, fmt.Errorf("key_command for %s: %w", provider, err)
		}
		cfg.Key, cfg.KeySource = NewSecret(key), "key_command"
	case keyEnv != "" && env(keyEnv) != "":
		cfg.Key, cfg.KeySource = NewSecret(strings.TrimSpace(env(keyEnv))), keyEnv
	}
	return cfg, nil
}

// restrictRepo keeps what a repository may set and warns about the rest.
func restrictRepo(f File, path string, warnings *[]string) File {
	var refused []string
	if f.BaseURL != "" {
		refused = append(refused, "base_url")
	}
	if f.KeyCommand != "" {
		refused = append(refused, "key_command")
	}
	if f.KeyEnv != "" {
		refused = append(refused, "key_env")
	}
	if len(f.Providers) > 0 {
		refused = append(refused, "[providers]")
	}
	if len(f.Prices) > 0 {
		refused = append(refused, "[prices]")
	}
	if f.MaxAttempts != 0 || f.IdleTimeout != "" {
		refused = append(refused, "max_attempts/idle_timeout")
	}
	if f.Sandbox != "" || f.Auto != "" || f.Theme != "" {
		refused = append(refused, "sandbox/auto/theme")
	}
	if len(refused) > 0 {
		*warnings = append(*warnings, fmt.Sprintf("%s sets %s: ignored. Only your user config, environment or flags may say where a key is sent, how it is read, or how the console is contained.",
			path, strings.Join(refused, ", ")))
	}
	return File{Model: f.Model, MaxTokens: f.MaxTokens, ThinkingBudget: f.ThinkingBudget, Thinking: f.Thinking}
}

// readFile decodes one TOML file; a missing file is not an error. Unknown
// keys become warnings, not failures, so an older staage still starts.
func readFile(path string, warnings *[]string) (File, bool, error) {
	var f File
	fh, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return f, false, nil
	}
	if err != nil {
		return f, false, fmt.Errorf("config %s: %w", path, err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return f, false, fmt.Errorf("config %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return f, false, fmt.Errorf("config %s: not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(fh, maxConfigBytes+1))
	if err != nil {
		return f, false, fmt.Errorf("config %s: %w", path, err)
	}
	if len(data) > maxConfigBytes {
		return f, false, fmt.Errorf("config %s: larger than %d bytes", path, maxConfigBytes)
	}
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	err = dec.Decode(&f)
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) {
		var keys []string
		for _, e := range strict.Errors {
			keys = append(keys, strings.Join(e.Key(), "."))
		}
		sort.Strings(keys)
		*warnings = append(*warnings, fmt.Sprintf("%s: unknown keys ignored: %s", path, strings.Join(keys, ", ")))
		f = File{}
		err = toml.Unmarshal(data, &f)
	}
	if err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return f, false, fmt.Errorf("config %s:%d:%d: %s", path, row, col, de.Error())
		}
		return f, false, fmt.Errorf("config %s: %w", path, err)
	}
	return f, true, nil
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

func firstPositive(vs ...int) int {
	for _, v := range vs {
		if v > 0 {
			return v
		}
	}
	return 0
}

func atoi(s string) int {
	n, _ := strconv.Atoi(strings.TrimSpace(s))
	return n
}

func envIf(env func(string) string, name string) string {
	if name == "" {
		return ""
	}
	return env(name)
}
