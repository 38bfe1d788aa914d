package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// mount is one bwrap mount operation over a protected path.
type mount struct {
	op   string // "--bind", "--ro-bind" or "--tmpfs" (no src)
	src  string
	dst  string
	hold string // a placeholder path this mount creates on the host, if any
}

// append adds the mount's bwrap arguments to a.
func (m mount) append(a []string) []string {
	if m.op == "--tmpfs" {
		return append(a, m.op, m.dst)
	}
	return append(a, m.op, m.src, m.dst)
}

// protections lists the mounts that keep a workspace's sensitive paths
// read-only inside product mode: .git/hooks, .git/config, .staage/ and a
// core.hooksPath inside the workspace. A path that does not exist yet gets an
// empty read-only placeholder mounted over it, so the command cannot create
// it either; a directory that holds a read-only mount is itself bound, which
// makes it a mount point the command cannot rename away and replace.
func (st *state) protections(ctx context.Context, ws string, env []string) ([]mount, error) {
	var ms []mount
	ro := func(p string, dir bool) {
		st.mu.Lock()
		defer st.mu.Unlock()
		// A placeholder of a running command exists on the host but still
		// stands for "does not exist": share it, do not protect it as real.
		if st.holds[p] == 0 {
			if _, err := os.Lstat(p); err == nil {
				ms = append(ms, mount{op: "--ro-bind", src: p, dst: p})
				return
			}
		}
		st.holds[p]++
		src := st.emptyFile()
		if dir {
			src = st.emptyDir()
		}
		ms = append(ms, mount{op: "--ro-bind", src: src, dst: p, hold: p})
	}
	gitDir := func(g string) {
		ms = append(ms, mount{op: "--bind", src: g, dst: g})
		ro(filepath.Join(g, "hooks"), true)
		ro(filepath.Join(g, "config"), false)
	}

	dotgit := filepath.Join(ws, ".git")
	fi, err := os.Lstat(dotgit)
	switch {
	case st.held(dotgit) || errors.Is(err, fs.ErrNotExist):
		// Not a repository: the command must not make it one, or a config
		// it writes would run code in the operator's next git command.
		ro(dotgit, true)
	case err != nil:
		return nil, fmt.Errorf("inspect %s: %w", dotgit, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, fmt.Errorf("%s is a symbolic link; product mode cannot protect it", dotgit)
	case fi.IsDir():
		gitDir(dotgit)
	default:
		// A linked worktree: .git is a file naming the real git dir.
		ms = append(ms, mount{op: "--ro-bind", src: dotgit, dst: dotgit})
		for _, g := range linkedGitDirs(dotgit) {
			if within(ws, g) {
				gitDir(g)
			}
		}
	}
	ro(filepath.Join(ws, ".staage"), true)
	if hp := st.cachedHooksPath(ctx, ws, env); hp != "" && within(ws, hp) && !within(filepath.Join(dotgit, "hooks"), hp) && hp != ws {
		ro(hp, true)
	}
	return ms, nil
}

// linkedGitDirs reads the gitdir a .git file names and that dir's commondir.
func linkedGitDirs(dotgit string) []string {
	b, err := os.ReadFile(dotgit)
	if err != nil {
		return nil
	}
	line, _, _ := strings.Cut(string(b), "\n")
	g, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return nil
	}
	g = strings.TrimSpace(g)
	if !filepath.IsAbs(g) {
		g = filepath.Join(filepath.Dir(dotgit), g)
	}
	out := []string{filepath.Clean(g)}
	if c, err := os.ReadFile(filepath.Join(g, "commondir")); err == nil {
		cd := strings.TrimSpace(string(c))
		if !filepath.IsAbs(cd) {
			cd = filepath.Join(g, cd)
		}
		out = append(out, filepath.Clean(cd))
	}
	return out
}

// cachedHooksPath remembers core.hooksPath per workspace until one of the
// config files it comes from changes: spawning git costs milliseconds on
// every command, and in product mode the repository's config cannot change
// from inside the sandbox.
func (st *state) cachedHooksPath(ctx context.Context, ws string, env []string) string {
	home, _ := lookup(env, "HOME")
	var key strings.Builder
	key.WriteString(ws)
	for _, f := range []string{filepath.Join(ws, ".git", "config"), filepath.Join(ws, ".git"),
		filepath.Join(home, ".gitconfig"), filepath.Join(home, ".config", "git", "config"), "/etc/gitconfig"} {
		if fi, err := os.Stat(f); err == nil {
			fmt.Fprintf(&key, "|%s:%d:%d", f, fi.Size(), fi.ModTime().UnixNano())
		} else {
			key.WriteString("|-")
		}
	}
	st.mu.Lock()
	if e, ok := st.hooks[ws]; ok && e.key == key.String() {
		st.mu.Unlock()
		return e.path
	}
	st.mu.Unlock()
	p := hooksPath(ctx, ws, env)
	st.mu.Lock()
	st.hooks[ws] = hooksEntry{key: key.String(), path: p}
	st.mu.Unlock()
	return p
}

type hooksEntry struct {
	key, path string
}

// hooksPath asks git for core.hooksPath (git config does not run programs).
func hooksPath(ctx context.Context, ws string, env []string) string {
	git, err := exec.LookPath("git")
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, git, "-C", ws, "config", "--get", "core.hooksPath")
	cmd.Env = Scrub(env)
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	if !sc.Scan() {
		return ""
	}
	p := strings.TrimSpace(sc.Text())
	if p == "" {
		return ""
	}
	if strings.HasPrefix(p, "~/") {
		return "" // in the operator's home: outside the workspace, read-only anyway
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(ws, p)
	}
	return filepath.Clean(p)
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

// held reports whether p is a placeholder another run created and still uses:
// it exists on the host but stands for "does not exist".
func (st *state) held(p string) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.holds[p] > 0
}

// release gives back the placeholders of a run and removes the ones bwrap created as mount points, once no
// run uses them and only if they are still empty (an operator's own file
// created meanwhile is never removed).
func (st *state) release(ms []mount) {
	st.mu.Lock()
	defer st.mu.Unlock()
	// Deepest first, so .git/hooks goes before .git.
	for i := len(ms) - 1; i >= 0; i-- {
		p := ms[i].hold
		if p == "" {
			continue
		}
		st.holds[p]--
		if st.holds[p] > 0 {
			continue
		}
		delete(st.holds, p)
		if fi, err := os.Lstat(p); err == nil && (fi.IsDir() || fi.Size() == 0) {
			_ = os.Remove(p)
		}
	}
}
