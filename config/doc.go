// Package config resolves which model staage talks to and how: provider,
// model, base URL, max tokens, prices and the API key, from the operator's
// TOML file (~/.config/staage/config.toml), the workspace's
// .staage/config.toml, the environment and flags; and it builds the
// provider and the system prompt.
//
// The trust rule: only the operator's own sources (their user file, their
// environment, their flags) may say where a key is sent or how it is
// obtained. A repository's config may pick the model and its token limits,
// never base_url, key_command or key_env, and never prices; those keys are
// ignored with a warning the operator sees at boot.
package config
