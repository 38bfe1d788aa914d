// Package workspace confines the file tools to one directory.
//
// A Root is built on os.Root, so every open is confined by the kernel-backed
// walk Go does (no "..", no absolute paths, no symlink out of the tree).
// Resolve adds what the tools need on top: a canonical workspace-relative
// path for a path the model gave, with symlinks evaluated, and a typed
// path.escape refusal when the path leaves the root. Reads refuse anything
// that is not a regular file without blocking on a FIFO; writes are atomic
// (temp file, fsync, rename, fsync the directory) and keep the file's mode.
package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"staage/tools"
)

// MaxPathLen bounds a path argument; longer is refused, not resolved.
const MaxPathLen = 4096

// maxNameLen is the longest file name Linux file systems accept.
const maxNameLen = 255

// maxLinkHops bounds symlink evaluation (the kernel's own limit is 40).
const maxLinkHops = 40

// Root is an open workspace directory.
type Root struct {
	dir   string // absolute, symlinks evaluated
	given string // absolute as given (may differ from dir through a symlink)
	root  *os.Root
}

// Open opens dir as a workspace. dir must be an existing directory.
func Open(dir string) (*Root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	r, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	return &Root{dir: real, given: abs, root: r}, nil
}

// Dir is the absolute path of the root, symlinks evaluated.
func (r *Root) Dir() string { return r.dir }

// OS is the underlying os.Root, for walkers: every open through it stays
// inside the workspace.
func (r *Root) OS() *os.Root { return r.root }

// Close releases the directory handle.
func (r *Root) Close() error { return r.root.Close() }

func escape(p, why string) *tools.Refusal {
	return tools.Refuse(tools.PathEscape, fmt.Sprintf("%q is outside the workspace: %s", p, why)).With("path", p)
}

// Resolve turns a path the model gave into a clean workspace-relative path
// ("." for the root itself) with every existing symlink evaluated. Missing
// trailing components are kept lexically, so a file about to be created
// resolves too. It refuses with path.escape when the path, or any symlink on
// the way, leads outside the root: "..", absolute paths elsewhere (including
// /proc/self/root/...), sibling directories sharing the root's name as a
// prefix, and links pointing out. Malformed paths (NUL bytes, overlong) are
// args.invalid.
func (r *Root) Resolve(p string) (string, error) {
	if len(p) > MaxPathLen {
		return "", tools.Refuse(tools.ArgsInvalid, fmt.Sprintf("path is %d bytes, over the %d byte limit", len(p), MaxPathLen))
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", tools.Refuse(tools.ArgsInvalid, "path contains a NUL byte")
	}
	rel := p
	if filepath.IsAbs(p) {
		var ok bool
		if rel, ok = r.inside(p); !ok {
			return "", escape(p, "absolute path")
		}
	}
	rel = filepath.Clean(rel)
	if isDotDot(rel) {
		return "", escape(p, `".." leaves the root`)
	}
	parts := splitPath(rel)
	for _, c := range parts {
		if len(c) > maxNameLen {
			return "", tools.Refuse(tools.ArgsInvalid, fmt.Sprintf("a path component is %d bytes, over the %d byte limit", len(c), maxNameLen))
		}
	}
	var done []string // resolved components: existing, none a symlink
	missing := false
	hops := 0
	for len(parts) > 0 {
		c := parts[0]
		parts = parts[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(done) == 0 {
				return "", escape(p, `".." leaves the root`)
			}
			done = done[:len(done)-1]
			continue
		}
		if missing {
			done = append(done, c)
			continue
		}
		cand := strings.Join(append(done, c), "/")
		fi, err := r.root.Lstat(cand)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				missing = true
				done = append(done, c)
				continue
			}
			return "", fmt.Errorf("resolve %q: %w", p, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done = append(done, c)
			continue
		}
		hops++
		if hops > maxLinkHops {
			return "", escape(p, "too many levels of symbolic links")
		}
		target, err := r.root.Readlink(cand)
		if err != nil {
			return "", fmt.Errorf("resolve %q: %w", p, err)
		}
		if filepath.IsAbs(target) {
			t, ok := r.inside(target)
			if !ok {
				return "", escape(p, fmt.Sprintf("symlink %s points outside", cand))
			}
			done = nil
			parts = append(splitPath(t), parts...)
			continue
		}
		if strings.IndexByte(target, 0) >= 0 {
			return "", escape(p, "symlink target is malformed")
		}
		parts = append(splitPath(target), parts...)
	}
	if len(done) == 0 {
		return ".", nil
	}
	return strings.Join(done, "/"), nil
}

// inside maps an absolute path to a clean relative one if it lies in the
// root, by either its evaluated or its given absolute name. filepath.Rel
// compares whole components, so "/w/app-evil" is not inside "/w/app".
func (r *Root) inside(abs string) (string, bool) {
	abs = filepath.Clean(abs)
	for _, base := range []string{r.dir, r.given} {
		rel, err := filepath.Rel(base, abs)
		if err == nil && !isDotDot(rel) && !filepath.IsAbs(rel) {
			return rel, true
		}
	}
	return "", false
}

func isDotDot(rel string) bool {
	return rel == ".." || strings.HasPrefix(rel, "../")
}

func splitPath(p string) []string {
	return strings.Split(filepath.ToSlash(p), "/")
}
