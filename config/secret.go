package config

// Secret holds an API key. Every way Go prints or encodes a value shows
// "[redacted]"; only Reveal gives the key, and only the provider
// constructor calls it.
type Secret struct{ v string }

// NewSecret wraps a key.
func NewSecret(s string) Secret { return Secret{v: s} }

const redacted = "[redacted]"

// Reveal returns the key.
func (s Secret) Reveal() string { return s.v }

// IsSet reports whether there is a key.
func (s Secret) IsSet() bool { return s.v != "" }

// String redacts.
func (s Secret) String() string {
	if s.v == "" {
		return ""
	}
	return redacted
}

// GoString redacts (%#v).
func (s Secret) GoString() string { return `config.Secret("` + s.String() + `")` }

// MarshalJSON redacts.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + s.String() + `"`), nil }

// MarshalText redacts (TOML, YAML, slog's text handler).
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }
