package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// toolRoots are the directories under the operator's home that toolchains
// need at run time, with the environment variable that may move each.
var toolRoots = []struct{ env, def string }{
	{"GOPATH", "go"},
	{"PYENV_ROOT", ".pyenv"},
	{"RUSTUP_HOME", ".rustup"},
	{"CARGO_HOME", ".cargo"},
}

// credentialFiles inside exposed tool roots are masked with an empty file.
var credentialFiles = []string{".cargo/credentials", ".cargo/credentials.toml"}

// homeMounts hides the operator's home directory from a product command (a
// tmpfs over it: no ~/.ssh, ~/.aws, ~/.config, tokens) and exposes again,
// read-only, only what toolchains need: the PATH entries under it (with the
// lib directory beside a bin), the Go, pyenv and Rust roots and the module
// cache. It returns nil when there is no home to hide or the workspace is the
// home itself.
func homeMounts(env []string, ws string) []mount {
	home, ok := lookup(env, "HOME")
	if !ok || !filepath.IsAbs(home) {
		return nil
	}
	home = filepath.Clean(home)
	if h, err := filepath.EvalSymlinks(home); err == nil {
		home = h
	}
	if home == "/" || within(ws, home) {
		return nil
	}
	if fi, err := os.Stat(home); err != nil || !fi.IsDir() {
		return nil
	}
	var expose []string
	add := func(p string) {
		if p == "" || !filepath.IsAbs(p) {
			return
		}
		p = filepath.Clean(p)
		if p == home || !within(home, p) || within(ws, p) {
			return
		}
		if _, err := os.Stat(p); err == nil && !slices.Contains(expose, p) {
			expose = append(expose, p)
		}
	}
	if path, ok := lookup(env, "PATH"); ok {
		for _, d := range filepath.SplitList(path) {
			add(d)
			if b := filepath.Base(d); b == "bin" || b == "shims" {
				add(filepath.Join(filepath.Dir(d), "lib"))
			}
		}
	}
	for _, r := range toolRoots {
		if v, ok := lookup(env, r.env); ok && v != "" {
			add(filepath.SplitList(v)[0])
		} else {
			add(filepath.Join(home, r.def))
		}
	}
	if v, ok := lookup(env, "GOMODCACHE"); ok {
		add(v)
	}
	add(filepath.Join(home, ".gitconfig"))
	add(filepath.Join(home, ".config", "git", "config"))
	// Parents before children, so a nested exposure lands on top.
	slices.SortFunc(expose, func(a, b string) int { return strings.Count(a, "/") - strings.Count(b, "/") })

	ms := []mount{{op: "--tmpfs", dst: home}}
	for _, p := range expose {
		ms = append(ms, mount{op: "--ro-bind", src: p, dst: p})
	}
	for _, c := range credentialFiles {
		p := filepath.Join(home, c)
		if _, err := os.Lstat(p); err == nil && slices.ContainsFunc(expose, func(e string) bool { return within(e, p) }) {
			ms = append(ms, mount{op: "--ro-bind", src: "/dev/null", dst: p})
		}
	}
	return ms
}

// gitGlobal points git at the operator's own global config (read-only), so
// commits made in a sandbox with a private HOME keep the operator's identity.
func gitGlobal(env []string) []string {
	if _, ok := lookup(env, "GIT_CONFIG_GLOBAL"); ok {
		return nil
	}
	home, ok := lookup(env, "HOME")
	if !ok || home == "" {
		return nil
	}
	p := filepath.Join(home, ".gitconfig")
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
		return []string{"GIT_CONFIG_GLOBAL=" + p}
	}
	return nil
}
