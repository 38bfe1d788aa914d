package journal

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// redacted replaces a secret wherever it would have been written.
const redacted = "[redacted]"

// minSecretLen keeps short values (a "1", a "true") from being treated as
// secrets and blanking half the journal.
const minSecretLen = 8

// secretName reports whether an environment variable's name marks its value
// as a credential.
func secretName(name string) bool {
	up := strings.ToUpper(name)
	for _, p := range [...]string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "COOKIE"} {
		if strings.Contains(up, p) {
			return true
		}
	}
	return false
}

// SecretsFromEnv picks the values of credential-looking variables
// (ANTHROPIC_API_KEY, GITHUB_TOKEN, ...) from an environment in os.Environ
// form. Create redacts these from every line by default, so a key echoed by
// a bash call or pasted into a prompt never lands in the journal.
func SecretsFromEnv(environ []string) []string {
	var out []string
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || len(val) < minSecretLen {
			continue
		}
		if secretName(name) {
			out = append(out, val)
		}
	}
	return out
}

// redactor rewrites encoded lines. It holds each secret both raw and as it
// appears inside a JSON string (escaped), since lines are JSON.
type redactor struct {
	needles [][]byte
	longest int
}

func newRedactor(secrets []string) *redactor {
	r := &redactor{}
	seen := map[string]bool{}
	for _, s := range secrets {
		if len(s) < minSecretLen {
			continue
		}
		forms := []string{s}
		if enc, err := json.Marshal(s); err == nil {
			forms = append(forms, string(enc[1:len(enc)-1]))
		}
		for _, f := range forms {
			if !seen[f] {
				seen[f] = true
				r.needles = append(r.needles, []byte(f))
				r.longest = max(r.longest, len(f))
			}
		}
	}
	return r
}

// apply returns line with every secret replaced. It allocates only when a
// secret is present.
func (r *redactor) apply(line []byte) []byte {
	for _, n := range r.needles {
		if bytes.Contains(line, n) {
			line = bytes.ReplaceAll(line, n, []byte(redacted))
		}
	}
	return line
}

// holdBack is how many trailing bytes of a streamed text to keep back when
// flushing early, so a secret split across two flushes is still seen whole.
// It is cut at a rune boundary.
func (r *redactor) holdBack(text string) int {
	if r == nil || r.longest <= 1 || len(text) == 0 {
		return 0
	}
	n := min(r.longest-1, len(text))
	for n < len(text) && !utf8.RuneStart(text[len(text)-n]) {
		n++
	}
	return n
}
