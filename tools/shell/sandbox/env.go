package sandbox

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// allowEnv are the variables product mode passes from the console to a
// command; every other variable is dropped. They say where tools are and how
// to talk to the operator, never who the operator is to a remote service.
var allowEnv = []string{
	"PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_COLLATE", "LC_MESSAGES",
	"LC_NUMERIC", "LC_TIME", "LC_MONETARY", "TZ", "USER", "LOGNAME",
	"GOPATH", "GOROOT", "GOFLAGS", "GOTOOLCHAIN", "GOMODCACHE", "GOPROXY", "GOSUMDB",
	"GONOSUMDB", "GOPRIVATE", "GONOPROXY", "GOEXPERIMENT", "GOAMD64", "CGO_ENABLED", "CC", "CXX",
	"CARGO_HOME", "RUSTUP_HOME", "JAVA_HOME", "PYENV_ROOT", "VIRTUAL_ENV", "CI",
}

// homeDerived are variables that point into the operator's home or caches;
// in a sandbox they would name read-only places, so they are dropped and the
// tools fall back to the private HOME.
var homeDerived = []string{
	"HOME", "TMPDIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
	"XDG_RUNTIME_DIR", "GOCACHE", "GOTMPDIR", "PWD", "OLDPWD",
}

// secretName matches variable names that carry credentials.
var secretName = regexp.MustCompile(`(?i)(^|_)(API_?KEY|KEY|KEYS|TOKEN|SECRET|SECRETS|PASSWORD|PASSWD|PASS|CREDENTIALS?|AUTH|SESSION|COOKIE|PRIVATE)(_|$)`)

// secretValue matches well-known credential formats whatever their name.
var secretValue = regexp.MustCompile(`^(sk-[A-Za-z0-9_-]{16,}|sk-ant-|ghp_|gho_|ghs_|ghu_|github_pat_|glpat-|xox[abpr]-|AKIA[0-9A-Z]{16}|hf_[A-Za-z0-9]{20,}|AIza[0-9A-Za-z_-]{20,})`)

// dangerousName are variables that make a program load or run other code.
var dangerousName = regexp.MustCompile(`^(LD_[A-Z_]+|BASH_ENV|ENV|BASH_FUNC_.*|PROMPT_COMMAND|SHELLOPTS|BASHOPTS|IFS|PS4|GIT_SSH|GIT_SSH_COMMAND|GIT_EXEC_PATH|GIT_CONFIG_PARAMETERS|GIT_CONFIG_COUNT|GIT_CONFIG_KEY_.*|GIT_CONFIG_VALUE_.*|GIT_PAGER|PAGER|EDITOR|VISUAL|GIT_EDITOR|PYTHONSTARTUP|PERL5OPT|NODE_OPTIONS|RUBYOPT)$`)

// IsSecret reports whether an environment entry carries a credential (by
// its name or by the shape of its value). Exported for other families that
// start programs.
func IsSecret(name, value string) bool {
	return secretName.MatchString(name) || secretValue.MatchString(value)
}

// Scrub returns env without credentials; the order is kept.
func Scrub(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || IsSecret(k, v) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func lookup(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// productEnv is the cleared environment: the allowlist, then the values the
// sandbox owns.
func productEnv(console []string, home, tmp string) []string {
	var out []string
	for _, k := range allowEnv {
		if v, ok := lookup(console, k); ok && !IsSecret(k, v) {
			out = append(out, k+"="+v)
		}
	}
	out = withModCache(out, console)
	return append(out, "HOME="+home, "TMPDIR="+tmp, "TERM=dumb", "SHELL=/bin/bash", "STAAGE_SANDBOX=product")
}

// benchEnv is the console's environment without credentials, without what
// loads code behind a command's back, and with HOME and the caches moved to
// the private directory.
func benchEnv(console []string, home, tmp string) []string {
	var out []string
	for _, kv := range Scrub(console) {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(homeDerived, k) || dangerousName.MatchString(k) || k == "STAAGE_SANDBOX" || k == "TERM" {
			continue
		}
		out = append(out, kv)
	}
	out = withModCache(out, console)
	return append(out, "HOME="+home, "TMPDIR="+tmp, "TERM=dumb", "STAAGE_SANDBOX=bench")
}

// offEnv is the console's environment without credentials.
func offEnv(console []string) []string {
	var out []string
	for _, kv := range Scrub(console) {
		if k, _, _ := strings.Cut(kv, "="); k == "STAAGE_SANDBOX" {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "STAAGE_SANDBOX=off")
}

// withModCache keeps Go's module cache reachable (read-only) when the
// private HOME would otherwise hide it: without it, go build would try to
// download every module again.
func withModCache(out, console []string) []string {
	if _, ok := lookup(out, "GOMODCACHE"); ok {
		return out
	}
	var dir string
	if gp, ok := lookup(console, "GOPATH"); ok && gp != "" {
		dir = filepath.Join(filepath.SplitList(gp)[0], "pkg", "mod")
	} else if h, ok := lookup(console, "HOME"); ok && h != "" {
		dir = filepath.Join(h, "go", "pkg", "mod")
	}
	if dir == "" {
		return out
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return out
	}
	return append(out, "GOMODCACHE="+dir)
}
