package delegate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// MaxPatchBytes bounds one change's diff. A write child is a bounded task; a
// diff larger than this is refused rather than shown in part.
const MaxPatchBytes = 16 << 20

// idPattern is the only shape a change id has. Ids from the model are
// matched against it before they become a path.
var idPattern = regexp.MustCompile(`^change-[1-9][0-9]{0,8}$`)

// Worktrees manages the disposable git worktrees of write children, all
// under one root directory outside the main checkout. Each worktree starts
// at the main checkout's current state (HEAD plus staged, unstaged and
// untracked-but-not-ignored changes), recorded as a snapshot commit that is
// the worktree's detached HEAD; the child's change is the diff from there.
//
// Git runs with hooks and fsmonitor switched off, external diff and
// textconv disabled, and no terminal prompt: creating a worktree for a
// NEVER-policy tool must not run repository-configured programs.
type Worktrees struct {
	repo string // the main checkout as given
	root string

	mu sync.Mutex // serializes git writes to the shared repository

	topMu sync.Mutex
	top   string // the main checkout's top level, resolved once
}

// NewWorktrees returns a manager for worktrees of repo under root. Nothing
// is touched until the first Create.
func NewWorktrees(repo, root string) *Worktrees {
	return &Worktrees{repo: repo, root: root}
}

// Worktree is one child's checkout.
type Worktree struct {
	ID   string // "change-N": the name the envelope and apply_change use
	Dir  string // absolute path of the checkout
	Base string // the snapshot commit the checkout started from
}

// FileChange is one path a change touches.
type FileChange struct {
	Path string `json:"path"`
	Op   string `json:"op"` // "create" | "modify" | "delete"
}

// Change is a worktree's diff against its snapshot.
type Change struct {
	ID    string
	Patch []byte // git diff --binary, relative to the checkout's top level
	Files []FileChange
}

// Empty reports whether the change touches nothing.
func (c Change) Empty() bool { return len(c.Files) == 0 }

// ErrUnknown is returned for an id that names no worktree of this manager.
var ErrUnknown = errors.New("no such change")

// ErrConflict wraps a diff that no longer applies to the main checkout.
var ErrConflict = errors.New("the change does not apply to the main checkout")

// git runs one git command in dir. extraEnv is appended to a cleaned
// environment; stdin may be nil.
func git(ctx context.Context, dir string, extraEnv []string, stdin []byte, args ...string) ([]byte, error) {
	full := append([]string{
		"-c", "core.hooksPath=" + os.DevNull,
		"-c", "core.fsmonitor=false",
		"-c", "commit.gpgSign=false",
		"-c", "core.quotePath=false",
		"-C", dir,
	}, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Env = append(gitEnv(), extraEnv...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if len(msg) > 2000 {
			msg = msg[:2000] + "…"
		}
		return out.Bytes(), fmt.Errorf("git %s: %w: %s", args[0], err, msg)
	}
	return out.Bytes(), nil
}

// gitEnv is the process environment without the variables that would point
// git at another repository, index or work tree than the one named by -C.
func gitEnv() []string {
	drop := map[string]bool{
		"GIT_DIR": true, "GIT_WORK_TREE": true, "GIT_INDEX_FILE": true, "GIT_OBJECT_DIRECTORY": true,
		"GIT_ALTERNATE_OBJECT_DIRECTORIES": true, "GIT_COMMON_DIR": true, "GIT_PREFIX": true,
		"GIT_EXTERNAL_DIFF": true, "GIT_PAGER": true,
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			env = append(env, kv)
		}
	}
	return append(env, "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
}

// toplevel resolves the main checkout's top level once.
func (w *Worktrees) toplevel(ctx context.Context) (string, error) {
	w.topMu.Lock()
	defer w.topMu.Unlock()
	if w.top != "" {
		return w.top, nil
	}
	out, err := git(ctx, w.repo, nil, nil, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", fmt.Errorf("main checkout %s: %w", w.repo, err)
	}
	top := strings.TrimSpace(string(out))
	root, err := filepath.Abs(w.root)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(filepath.Dir(root)); err == nil {
		root = filepath.Join(real, filepath.Base(root))
	}
	if rel, err := filepath.Rel(top, root); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("the worktree root %s is inside the main checkout %s; it must be outside it", w.root, top)
	}
	w.top = top
	return top, nil
}

// Validate checks, without changing anything, that the main checkout is a
// git repository and the root lies outside it: a boot can report a
// misconfiguration at once rather than at the first write child.
func (w *Worktrees) Validate(ctx context.Context) error {
	_, err := w.toplevel(ctx)
	return err
}

// Create takes a snapshot of the main checkout and checks it out in a new
// worktree under the root.
func (w *Worktrees) Create(ctx context.Context) (Worktree, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	top, err := w.toplevel(ctx)
	if err != nil {
		return Worktree{}, err
	}
	base, err := snapshot(ctx, top)
	if err != nil {
		return Worktree{}, fmt.Errorf("snapshot of the main checkout: %w", err)
	}
	if err := os.MkdirAll(w.root, 0o700); err != nil {
		return Worktree{}, fmt.Errorf("worktree root: %w", err)
	}
	id, dir, err := w.claim()
	if err != nil {
		return Worktree{}, err
	}
	if _, err := git(ctx, top, nil, nil, "worktree", "add", "--detach", dir, base); err != nil {
		os.RemoveAll(dir)
		return Worktree{}, err
	}
	return Worktree{ID: id, Dir: dir, Base: base}, nil
}

// claim reserves the next free change-N directory. Mkdir is the atomic
// claim, so two processes sharing a root cannot take the same id.
func (w *Worktrees) claim() (id, dir string, err error) {
	next := 1
	entries, err := os.ReadDir(w.root)
	if err != nil {
		return "", "", fmt.Errorf("worktree root: %w", err)
	}
	for _, e := range entries {
		if n, ok := idNumber(e.Name()); ok && n >= next {
			next = n + 1
		}
	}
	for range 100 {
		id = "change-" + strconv.Itoa(next)
		dir, err = filepath.Abs(filepath.Join(w.root, id))
		if err != nil {
			return "", "", err
		}
		if err = os.Mkdir(dir, 0o700); err == nil {
			return id, dir, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", "", fmt.Errorf("worktree directory: %w", err)
		}
		next++
	}
	return "", "", errors.New("no free change id under the worktree root")
}

func idNumber(name string) (int, bool) {
	if !idPattern.MatchString(name) {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimPrefix(name, "change-"))
	return n, err == nil
}

// snapshot records the checkout's current state as a commit without
// touching its index or files: a private copy of the index takes every
// change (git add -A honours .gitignore, so ignored files such as .env stay
// out), and the tree becomes a commit whose parent is HEAD.
func snapshot(ctx context.Context, top string) (string, error) {
	tmp, err := os.MkdirTemp("", "staage-snapshot-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	index := filepath.Join(tmp, "index")
	env := []string{"GIT_INDEX_FILE=" + index}

	head := ""
	if out, err := git(ctx, top, nil, nil, "rev-parse", "--verify", "-q", "HEAD^{commit}"); err == nil {
		head = strings.TrimSpace(string(out))
	}
	// Start from the real index when there is one: its stat data lets
	// add -A hash only what changed.
	if out, err := git(ctx, top, nil, nil, "rev-parse", "--path-format=absolute", "--git-path", "index"); err == nil {
		if b, err := os.ReadFile(strings.TrimSpace(string(out))); err == nil {
			if err := os.WriteFile(index, b, 0o600); err != nil {
				return "", err
			}
		}
	}
	if _, err := os.Stat(index); err != nil {
		readTree := []string{"read-tree", "--empty"}
		if head != "" {
			readTree = []string{"read-tree", head}
		}
		if _, err := git(ctx, top, env, nil, readTree...); err != nil {
			return "", err
		}
	}
	if _, err := git(ctx, top, env, nil, "add", "-A", "--", ":/"); err != nil {
		return "", err
	}
	out, err := git(ctx, top, env, nil, "write-tree")
	if err != nil {
		return "", err
	}
	tree := strings.TrimSpace(string(out))
	args := []string{"commit-tree", tree, "-m", "staage: snapshot of the main checkout for a write child"}
	if head != "" {
		args = append(args, "-p", head)
	}
	// A fixed identity: the snapshot must not depend on (or fail for lack
	// of) the operator's user.name.
	ident := []string{
		"GIT_AUTHOR_NAME=staage", "GIT_AUTHOR_EMAIL=staage@localhost",
		"GIT_COMMITTER_NAME=staage", "GIT_COMMITTER_EMAIL=staage@localhost",
	}
	out, err = git(ctx, top, ident, nil, args...)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// Dir returns the checkout of a registered worktree, or ErrUnknown.
func (w *Worktrees) Dir(ctx context.Context, id string) (string, error) {
	if !idPattern.MatchString(id) {
		return "", ErrUnknown
	}
	ids, err := w.List(ctx)
	if err != nil {
		return "", err
	}
	for _, have := range ids {
		if have == id {
			return filepath.Abs(filepath.Join(w.root, id))
		}
	}
	return "", ErrUnknown
}

// List returns the ids of the worktrees under the root that git knows as
// worktrees of the main checkout, sorted by number. A crashed session's
// children are still listed, so their changes can be applied on resume.
func (w *Worktrees) List(ctx context.Context) ([]string, error) {
	top, err := w.toplevel(ctx)
	if err != nil {
		return nil, err
	}
	out, err := git(ctx, top, nil, nil, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, err
	}
	root, err := filepath.Abs(w.root)
	if err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	var ids []string
	for _, field := range strings.Split(string(out), "\x00") {
		path, ok := strings.CutPrefix(field, "worktree ")
		if !ok {
			continue
		}
		if real, err := filepath.EvalSymlinks(path); err == nil {
			path = real
		}
		if filepath.Dir(path) == root && idPattern.MatchString(filepath.Base(path)) {
			ids = append(ids, filepath.Base(path))
		}
	}
	sort.Slice(ids, func(i, j int) bool {
		a, _ := idNumber(ids[i])
		b, _ := idNumber(ids[j])
		return a < b
	})
	return ids, nil
}

// Diff returns the change a worktree holds: everything that differs from
// its snapshot, new files included (ignored files excluded).
func (w *Worktrees) Diff(ctx context.Context, id string) (Change, error) {
	dir, err := w.Dir(ctx, id)
	if err != nil {
		return Change{}, err
	}
	// The child could write the worktree's .git file (its file tools are
	// rooted there) to point git at the main repository's index. The
	// admin directory is found from the main repository's side instead,
	// and named explicitly.
	admin, err := w.adminDir(ctx, dir)
	if err != nil {
		return Change{}, err
	}
	env := []string{"GIT_DIR=" + admin, "GIT_WORK_TREE=" + dir}
	// The worktree's own index is disposable: staging everything is how
	// untracked new files enter the diff.
	if _, err := git(ctx, dir, env, nil, "add", "-A", "--", ":/"); err != nil {
		return Change{}, err
	}
	diffArgs := []string{"diff", "--cached", "--no-renames", "--no-color", "--no-ext-diff", "--no-textconv"}
	names, err := git(ctx, dir, env, nil, append(diffArgs, "--name-status", "-z", "HEAD")...)
	if err != nil {
		return Change{}, err
	}
	files, err := parseNameStatus(names)
	if err != nil {
		return Change{}, err
	}
	ch := Change{ID: id, Files: files}
	if len(files) == 0 {
		return ch, nil
	}
	patch, err := git(ctx, dir, env, nil, append(diffArgs, "--binary", "--full-index", "HEAD")...)
	if err != nil {
		return Change{}, err
	}
	if len(patch) > MaxPatchBytes {
		return Change{}, fmt.Errorf("the change is %d bytes of diff, over the %d byte limit", len(patch), MaxPatchBytes)
	}
	ch.Patch = patch
	return ch, nil
}

// adminDir finds the worktree's administrative directory under the main
// repository's worktrees/ by its gitdir back-pointer, never by reading the
// worktree's own .git file.
func (w *Worktrees) adminDir(ctx context.Context, dir string) (string, error) {
	top, err := w.toplevel(ctx)
	if err != nil {
		return "", err
	}
	out, err := git(ctx, top, nil, nil, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", err
	}
	admins := filepath.Join(strings.TrimSpace(string(out)), "worktrees")
	entries, err := os.ReadDir(admins)
	if err != nil {
		return "", fmt.Errorf("worktree admin dirs: %w", err)
	}
	want := filepath.Join(dir, ".git")
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		want = filepath.Join(real, ".git")
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(admins, e.Name(), "gitdir"))
		if err != nil {
			continue
		}
		got := strings.TrimSpace(string(b))
		if real, err := filepath.EvalSymlinks(filepath.Dir(got)); err == nil {
			got = filepath.Join(real, ".git")
		}
		if got == want {
			return filepath.Join(admins, e.Name()), nil
		}
	}
	return "", fmt.Errorf("%w: %s is not registered with the main repository", ErrUnknown, dir)
}

func parseNameStatus(out []byte) ([]FileChange, error) {
	fields := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	var files []FileChange
	for i := 0; i+1 < len(fields); i += 2 {
		status, path := fields[i], fields[i+1]
		var op string
		switch {
		case strings.HasPrefix(status, "A"):
			op = "create"
		case strings.HasPrefix(status, "D"):
			op = "delete"
		case strings.HasPrefix(status, "M"), strings.HasPrefix(status, "T"):
			op = "modify"
		default:
			return nil, fmt.Errorf("unexpected diff status %q for %s", status, path)
		}
		files = append(files, FileChange{Path: path, Op: op})
	}
	return files, nil
}

// Check reports whether patch applies to the main checkout as it is now
// (ErrConflict with git's reason when it does not).
func (w *Worktrees) Check(ctx context.Context, patch []byte) error {
	top, err := w.toplevel(ctx)
	if err != nil {
		return err
	}
	if _, err := git(ctx, top, nil, patch, "apply", "--check", "--binary", "--whitespace=nowarn", "-"); err != nil {
		return fmt.Errorf("%w: %v", ErrConflict, err)
	}
	return nil
}

// Apply writes patch into the main checkout. git apply checks every hunk
// before it writes anything, so a conflict leaves the checkout untouched.
func (w *Worktrees) Apply(ctx context.Context, patch []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	top, err := w.toplevel(ctx)
	if err != nil {
		return err
	}
	if _, err := git(ctx, top, nil, patch, "apply", "--binary", "--whitespace=nowarn", "-"); err != nil {
		return fmt.Errorf("%w: %v", ErrConflict, err)
	}
	return nil
}

// Remove deletes a worktree and its registration.
func (w *Worktrees) Remove(ctx context.Context, id string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !idPattern.MatchString(id) {
		return ErrUnknown
	}
	top, err := w.toplevel(ctx)
	if err != nil {
		return err
	}
	dir, err := filepath.Abs(filepath.Join(w.root, id))
	if err != nil {
		return err
	}
	_, rmErr := git(ctx, top, nil, nil, "worktree", "remove", "--force", "--force", dir)
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove %s: %w", dir, err)
	}
	if _, err := git(ctx, top, nil, nil, "worktree", "prune"); err != nil {
		return err
	}
	if rmErr != nil {
		// The directory is gone and prune dropped the registration;
		// say what git said only if something is still registered.
		if ids, err := w.List(ctx); err == nil {
			for _, have := range ids {
				if have == id {
					return rmErr
				}
			}
		}
	}
	return nil
}
