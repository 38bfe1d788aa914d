package delegate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"staage/tools"
	"staage/tools/delegate"
)

// fakeRunner plays the agent loop: it records each spec and lets the test
// act as the child (editing files in the worktree it was given).
type fakeRunner struct {
	mu    sync.Mutex
	specs []delegate.ChildSpec
	child func(spec delegate.ChildSpec) (delegate.Envelope, error)
}

func (f *fakeRunner) RunChild(_ context.Context, spec delegate.ChildSpec) (delegate.Envelope, error) {
	f.mu.Lock()
	f.specs = append(f.specs, spec)
	f.mu.Unlock()
	return f.child(spec)
}

func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func lines(prefix string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s line %d\n", prefix, i)
	}
	return b.String()
}

// setup makes a main checkout with a commit and, on top of it, an unstaged
// edit, a staged edit, an untracked file and an ignored secret.
func setup(t *testing.T) (repo, root string) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(home, "gitconfig"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	base := t.TempDir()
	repo, root = filepath.Join(base, "main"), filepath.Join(base, "worktrees")
	gitRun(t, base, "init", "-q", "-b", "main", repo)
	gitRun(t, repo, "config", "user.name", "Test")
	gitRun(t, repo, "config", "user.email", "test@example.com")
	writeFile(t, filepath.Join(repo, "a.txt"), lines("a", 30))
	writeFile(t, filepath.Join(repo, "dir", "b.txt"), "b committed\n")
	writeFile(t, filepath.Join(repo, ".gitignore"), ".env\n")
	gitRun(t, repo, "add", "-A")
	gitRun(t, repo, "commit", "-q", "-m", "initial")
	writeFile(t, filepath.Join(repo, "a.txt"), strings.Replace(lines("a", 30), "a line 2\n", "a line 2 uncommitted\n", 1))
	writeFile(t, filepath.Join(repo, "dir", "b.txt"), "b staged\n")
	gitRun(t, repo, "add", "dir/b.txt")
	writeFile(t, filepath.Join(repo, "c.txt"), "c untracked\n")
	writeFile(t, filepath.Join(repo, ".env"), "SECRET=1\n")
	return repo, root
}

// state captures the main checkout as the operator would see it.
func state(t *testing.T, repo string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(gitRun(t, repo, "status", "--porcelain", "--untracked-files=all", "--ignored"))
	b.WriteString(gitRun(t, repo, "diff"))
	b.WriteString(gitRun(t, repo, "diff", "--cached"))
	for _, f := range []string{"a.txt", "dir/b.txt", "c.txt", ".env"} {
		if bs, err := os.ReadFile(filepath.Join(repo, f)); err == nil {
			b.WriteString(f + "=" + string(bs))
		}
	}
	return b.String()
}

func toolset(t *testing.T, deps delegate.Deps) *tools.Toolset {
	t.Helper()
	ts, rep := tools.NewToolset(delegate.Declarations(deps))
	if len(rep.Notes) != 0 {
		t.Fatalf("boot report %+v", rep.Notes)
	}
	return ts
}

func bind(t *testing.T, ts *tools.Toolset, name, id, args string) (*tools.Tool, tools.Call, *tools.Refusal) {
	t.Helper()
	tool, ok := ts.Lookup(name)
	if !ok {
		t.Fatalf("%s not offered (%v)", name, ts.Names())
	}
	call, ref := tool.Bind(id, "main", json.RawMessage(args))
	return tool, call, ref
}

func run(t *testing.T, ts *tools.Toolset, name, id, args string) tools.Result {
	t.Helper()
	tool, call, ref := bind(t, ts, name, id, args)
	if ref != nil {
		return ref
	}
	return tool.Handler().Run(context.Background(), call)
}

func preview(t *testing.T, ts *tools.Toolset, id, change string) (tools.DiffPreview, *tools.Refusal) {
	t.Helper()
	tool, call, ref := bind(t, ts, "apply_change", id, `{"change":"`+change+`"}`)
	if ref != nil {
		t.Fatalf("bind: %v", ref)
	}
	pv, ok := tool.Handler().(tools.Previewer)
	if !ok {
		t.Fatal("apply_change has no preview")
	}
	p, err := pv.Preview(context.Background(), call)
	var r *tools.Refusal
	if errors.As(err, &r) {
		return tools.DiffPreview{}, r
	}
	if err != nil {
		t.Fatalf("preview: %v", err)
	}
	return p.(tools.DiffPreview), nil
}

func payload[T any](t *testing.T, r tools.Result) T {
	t.Helper()
	ok, isOk := r.(tools.Ok)
	if !isOk {
		t.Fatalf("want ok, got %#v", r)
	}
	return ok.Payload.(T)
}

func refusal(t *testing.T, r tools.Result, name tools.RefusalName) *tools.Refusal {
	t.Helper()
	ref, ok := r.(*tools.Refusal)
	if !ok || ref.Name != name {
		t.Fatalf("want %s, got %#v", name, r)
	}
	return ref
}

const objective = "Rename the greeting in a.txt line 3 and add new/d.txt with a short note"

// editingChild checks that its worktree holds the main checkout's current
// state, then edits, creates and deletes files.
func editingChild(t *testing.T) func(delegate.ChildSpec) (delegate.Envelope, error) {
	return func(spec delegate.ChildSpec) (delegate.Envelope, error) {
		if spec.Mode != delegate.ModeWrite || spec.Workdir == "" || spec.ParentLane != "main" || spec.Objective != objective ||
			spec.Change != filepath.Base(spec.Workdir) {
			return delegate.Envelope{}, fmt.Errorf("spec %+v", spec)
		}
		wd := spec.Workdir
		a, err := os.ReadFile(filepath.Join(wd, "a.txt"))
		if err != nil || !strings.Contains(string(a), "a line 2 uncommitted\n") {
			return delegate.Envelope{}, fmt.Errorf("worktree lacks the unstaged edit: %q %v", a, err)
		}
		if b, _ := os.ReadFile(filepath.Join(wd, "dir", "b.txt")); string(b) != "b staged\n" {
			return delegate.Envelope{}, fmt.Errorf("worktree lacks the staged edit: %q", b)
		}
		if c, _ := os.ReadFile(filepath.Join(wd, "c.txt")); string(c) != "c untracked\n" {
			return delegate.Envelope{}, fmt.Errorf("worktree lacks the untracked file: %q", c)
		}
		if _, err := os.Stat(filepath.Join(wd, ".env")); !errors.Is(err, os.ErrNotExist) {
			return delegate.Envelope{}, fmt.Errorf("ignored secret was copied into the worktree: %v", err)
		}
		if err := os.WriteFile(filepath.Join(wd, "a.txt"), []byte(strings.Replace(string(a), "a line 3\n", "a line 3 by the child\n", 1)), 0o644); err != nil {
			return delegate.Envelope{}, err
		}
		if err := os.MkdirAll(filepath.Join(wd, "new"), 0o755); err != nil {
			return delegate.Envelope{}, err
		}
		if err := os.WriteFile(filepath.Join(wd, "new", "d.txt"), []byte("d by the child\n"), 0o644); err != nil {
			return delegate.Envelope{}, err
		}
		if err := os.Remove(filepath.Join(wd, "c.txt")); err != nil {
			return delegate.Envelope{}, err
		}
		return delegate.Envelope{Status: delegate.StatusDone, Summary: "renamed line 3, added d, removed c", Files: []string{"claimed.txt"}}, nil
	}
}

func TestWriteChildPreviewApply(t *testing.T) {
	repo, root := setup(t)
	before := state(t, repo)
	runner := &fakeRunner{child: editingChild(t)}
	ts := toolset(t, delegate.Deps{Runner: runner, Repo: repo, WorktreeRoot: root})
	if !slices.Equal(ts.Names(), []string{"apply_change", "task"}) {
		t.Fatalf("names %v", ts.Names())
	}
	if tool, _ := ts.Lookup("apply_change"); tool.Policy != tools.Required || tool.Effect != tools.EffectIrreversible {
		t.Fatalf("apply_change %s %s", tool.Policy, tool.Effect)
	}

	p := payload[delegate.TaskPayload](t, run(t, ts, "task", "t1", `{"objective":"`+objective+`","mode":"write"}`))
	if p.Status != delegate.StatusDone || p.Change != "change-1" || p.Mode != delegate.ModeWrite {
		t.Fatalf("envelope %+v", p)
	}
	if !slices.Equal(p.Files, []string{"a.txt", "c.txt", "new/d.txt"}) {
		t.Fatalf("files are the diff's, not the claim: %v", p.Files)
	}
	if got := state(t, repo); got != before {
		t.Fatalf("main checkout changed before apply_change:\n%s\nwant\n%s", got, before)
	}
	wtDir := filepath.Join(root, "change-1")
	if _, err := os.Stat(filepath.Join(wtDir, "new", "d.txt")); err != nil {
		t.Fatalf("worktree missing: %v", err)
	}

	prev, ref := preview(t, ts, "a1", "change-1")
	if ref != nil {
		t.Fatalf("preview refused: %v", ref)
	}
	if got := state(t, repo); got != before {
		t.Fatal("preview changed the main checkout")
	}
	byPath := map[string]tools.FileDiff{}
	for _, f := range prev.Files {
		byPath[f.Path] = f
	}
	if len(prev.Files) != 3 {
		t.Fatalf("preview files %+v", prev.Files)
	}
	a := byPath["a.txt"]
	if a.Op != tools.FileModify || !strings.Contains(a.Old, "a line 2 uncommitted\n") || !strings.Contains(a.New, "a line 3 by the child\n") ||
		!strings.Contains(a.Unified, "-a line 3\n+a line 3 by the child\n") || !strings.HasPrefix(a.Digest, "sha256:") {
		t.Fatalf("a.txt preview %+v", a)
	}
	if c := byPath["c.txt"]; c.Op != tools.FileDelete || c.Old != "c untracked\n" || c.New != "" || !strings.Contains(c.Unified, "+++ /dev/null") {
		t.Fatalf("c.txt preview %+v", c)
	}
	if d := byPath["new/d.txt"]; d.Op != tools.FileCreate || d.Old != "" || d.New != "d by the child\n" || d.Digest != "" || !strings.Contains(d.Unified, "--- /dev/null") {
		t.Fatalf("new/d.txt preview %+v", d)
	}

	tool, call, _ := bind(t, ts, "apply_change", "a1", `{"change":"change-1"}`)
	ap := payload[delegate.ApplyPayload](t, tool.Handler().Run(context.Background(), call))
	if !ap.Applied || !ap.WorktreeRemoved || len(ap.Files) != 3 {
		t.Fatalf("apply %+v", ap)
	}
	if got := readFile(t, filepath.Join(repo, "a.txt")); got != a.New {
		t.Fatalf("a.txt after apply differs from the preview:\n%s", got)
	}
	if got := readFile(t, filepath.Join(repo, "new", "d.txt")); got != "d by the child\n" {
		t.Fatalf("d.txt %q", got)
	}
	if _, err := os.Stat(filepath.Join(repo, "c.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("c.txt not deleted")
	}
	if readFile(t, filepath.Join(repo, "dir", "b.txt")) != "b staged\n" || readFile(t, filepath.Join(repo, ".env")) != "SECRET=1\n" {
		t.Fatal("files outside the change were touched")
	}
	if _, err := os.Stat(wtDir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("worktree not removed: %v", err)
	}
	if strings.Contains(gitRun(t, repo, "worktree", "list"), "change-1") {
		t.Fatal("worktree still registered")
	}
	// The change is gone: a second apply names nothing.
	refusal(t, run(t, ts, "apply_change", "a2", `{"change":"change-1"}`), tools.ChangeUnknown)
}

// newChange runs one write child that edits line 3 of a.txt and returns
// the toolset and the change id.
func newChange(t *testing.T, repo, root string) *tools.Toolset {
	t.Helper()
	runner := &fakeRunner{child: editingChild(t)}
	ts := toolset(t, delegate.Deps{Runner: runner, Repo: repo, WorktreeRoot: root})
	p := payload[delegate.TaskPayload](t, run(t, ts, "task", "t1", `{"objective":"`+objective+`","mode":"write"}`))
	if p.Change != "change-1" {
		t.Fatalf("change %q", p.Change)
	}
	return ts
}

func TestConflictBetweenPreviewAndRun(t *testing.T) {
	repo, root := setup(t)
	ts := newChange(t, repo, root)
	if _, ref := preview(t, ts, "a1", "change-1"); ref != nil {
		t.Fatalf("preview: %v", ref)
	}
	// The operator edits the same line while the modal is open.
	conflicting := strings.Replace(readFile(t, filepath.Join(repo, "a.txt")), "a line 3\n", "a line 3 by the operator\n", 1)
	writeFile(t, filepath.Join(repo, "a.txt"), conflicting)
	tool, call, _ := bind(t, ts, "apply_change", "a1", `{"change":"change-1"}`)
	refusal(t, tool.Handler().Run(context.Background(), call), tools.ChangeConflict)
	if readFile(t, filepath.Join(repo, "a.txt")) != conflicting {
		t.Fatal("a refused apply touched a.txt")
	}
	if _, err := os.Stat(filepath.Join(repo, "new", "d.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a refused apply created d.txt")
	}
	if _, err := os.Stat(filepath.Join(root, "change-1")); err != nil {
		t.Fatal("a refused apply removed the worktree")
	}
	// A fresh preview now refuses before asking anyone.
	if _, ref := preview(t, ts, "a2", "change-1"); ref == nil || ref.Name != tools.ChangeConflict {
		t.Fatalf("preview after conflict: %v", ref)
	}
}

func TestDriftElsewhereInAFile(t *testing.T) {
	repo, root := setup(t)
	ts := newChange(t, repo, root)
	// A far-away edit to a touched file before the preview: the diff
	// still applies, and the preview shows the result with both edits.
	drifted := strings.Replace(readFile(t, filepath.Join(repo, "a.txt")), "a line 28\n", "a line 28 drifted\n", 1)
	writeFile(t, filepath.Join(repo, "a.txt"), drifted)
	prev, ref := preview(t, ts, "a1", "change-1")
	if ref != nil {
		t.Fatalf("preview: %v", ref)
	}
	var a tools.FileDiff
	for _, f := range prev.Files {
		if f.Path == "a.txt" {
			a = f
		}
	}
	if !strings.Contains(a.New, "a line 28 drifted\n") || !strings.Contains(a.New, "a line 3 by the child\n") {
		t.Fatalf("preview New lost one of the edits:\n%s", a.New)
	}
	// A second drift after the preview: what was approved is not what
	// would be written, so the run refuses even though git could apply.
	writeFile(t, filepath.Join(repo, "a.txt"), strings.Replace(drifted, "a line 29\n", "a line 29 again\n", 1))
	tool, call, _ := bind(t, ts, "apply_change", "a1", `{"change":"change-1"}`)
	ref = refusal(t, tool.Handler().Run(context.Background(), call), tools.ChangeConflict)
	if ref.Details["path"] != "a.txt" {
		t.Fatalf("details %v", ref.Details)
	}
	// Asked again, it previews and applies.
	prev, _ = preview(t, ts, "a2", "change-1")
	tool, call, _ = bind(t, ts, "apply_change", "a2", `{"change":"change-1"}`)
	payload[delegate.ApplyPayload](t, tool.Handler().Run(context.Background(), call))
	for _, f := range prev.Files {
		if f.Path == "a.txt" && readFile(t, filepath.Join(repo, "a.txt")) != f.New {
			t.Fatal("applied a.txt differs from the preview")
		}
	}
}

func TestApplyUnknown(t *testing.T) {
	repo, root := setup(t)
	ts := newChange(t, repo, root)
	for _, id := range []string{"change-2", "../main", "change-1/../../main", "/etc", "change-01", "change-"} {
		ref := refusal(t, run(t, ts, "apply_change", "x", `{"change":"`+id+`"}`), tools.ChangeUnknown)
		if !strings.Contains(ref.Message, "change-1") {
			t.Errorf("%s: message does not list the pending change: %q", id, ref.Message)
		}
		if _, r := preview(t, ts, "x", id); r == nil || r.Name != tools.ChangeUnknown {
			t.Errorf("%s: preview %v", id, r)
		}
	}
	refusal(t, run(t, ts, "apply_change", "x", `{}`), tools.ArgsInvalid)
	if _, err := os.Stat(filepath.Join(root, "change-1")); err != nil {
		t.Fatal("unknown ids disturbed the pending worktree")
	}
}

func TestWriteChildOutcomes(t *testing.T) {
	repo, root := setup(t)
	cases := []struct {
		name          string
		child         func(spec delegate.ChildSpec) (delegate.Envelope, error)
		want          tools.RefusalName // "" for ok
		wantDiscarded []string
	}{
		{"failed child's edits are discarded", func(spec delegate.ChildSpec) (delegate.Envelope, error) {
			writeFile(t, filepath.Join(spec.Workdir, "half.txt"), "half\n")
			return delegate.Envelope{Status: delegate.StatusFailed, Summary: "could not finish"}, nil
		}, "", []string{"half.txt"}},
		{"cut child's edits are discarded", func(spec delegate.ChildSpec) (delegate.Envelope, error) {
			writeFile(t, filepath.Join(spec.Workdir, "a.txt"), "cut\n")
			return delegate.Envelope{Status: delegate.StatusCut}, nil
		}, "", []string{"a.txt"}},
		{"no edits, no change", func(delegate.ChildSpec) (delegate.Envelope, error) {
			return delegate.Envelope{Status: delegate.StatusDone, Summary: "nothing to do"}, nil
		}, "", nil},
		{"runner error", func(delegate.ChildSpec) (delegate.Envelope, error) {
			return delegate.Envelope{}, errors.New("provider unreachable")
		}, tools.ToolFailed, nil},
		{"interrupted", func(delegate.ChildSpec) (delegate.Envelope, error) {
			return delegate.Envelope{}, context.Canceled
		}, tools.ToolCancelled, nil},
	}
	before := state(t, repo)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := toolset(t, delegate.Deps{Runner: &fakeRunner{child: c.child}, Repo: repo, WorktreeRoot: root})
			r := run(t, ts, "task", "t", `{"objective":"`+objective+`","mode":"write"}`)
			if c.want != "" {
				refusal(t, r, c.want)
			} else {
				p := payload[delegate.TaskPayload](t, r)
				if p.Change != "" || !slices.Equal(p.Discarded, c.wantDiscarded) || len(p.Files) != 0 {
					t.Fatalf("payload %+v", p)
				}
			}
			if entries, _ := os.ReadDir(root); len(entries) != 0 {
				t.Fatalf("worktree left behind: %v", entries)
			}
			if strings.Contains(gitRun(t, repo, "worktree", "list"), root) {
				t.Fatal("worktree still registered")
			}
		})
	}
	if state(t, repo) != before {
		t.Fatal("main checkout changed")
	}
}

func TestScout(t *testing.T) {
	runner := &fakeRunner{child: func(spec delegate.ChildSpec) (delegate.Envelope, error) {
		return delegate.Envelope{
			Status:   "finished", // not one of the three
			Summary:  strings.Repeat("s", delegate.MaxSummaryBytes+10),
			Findings: append(slices.Repeat([]string{"f"}, delegate.MaxFindings), "one too many"),
			Change:   "change-7", // a scout cannot name a change
		}, nil
	}}
	ts := toolset(t, delegate.Deps{Runner: runner})
	if !slices.Equal(ts.Names(), []string{"task"}) {
		t.Fatalf("without a worktree root only task is offered: %v", ts.Names())
	}
	p := payload[delegate.TaskPayload](t, run(t, ts, "task", "t", `{"objective":"Find every caller of ParseConfig in cmd/ and report the flags each passes","mode":"scout"}`))
	if len(runner.specs) != 1 || runner.specs[0].Mode != delegate.ModeScout || runner.specs[0].Workdir != "" || runner.specs[0].ParentLane != "main" {
		t.Fatalf("specs %+v", runner.specs)
	}
	if p.Status != delegate.StatusFailed || !strings.Contains(p.Summary, `status "finished"`) || p.Change != "" ||
		!p.Truncated || len(p.Findings) != delegate.MaxFindings || p.Files == nil {
		t.Fatalf("payload status %q change %q truncated %v findings %d", p.Status, p.Change, p.Truncated, len(p.Findings))
	}
	b, _ := json.Marshal(p)
	for _, key := range []string{`"status":"failed"`, `"findings":[`, `"files":[]`, `"mode":"scout"`, `"truncated":true`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("wire lacks %s", key)
		}
	}
	// Write mode is not in this boot's schema at all.
	refusal(t, run(t, ts, "task", "t", `{"objective":"Find every caller of ParseConfig in cmd/","mode":"write"}`), tools.ArgsInvalid)
	if len(runner.specs) != 1 {
		t.Fatal("a refused task ran a child")
	}
}

func TestObjectiveRule(t *testing.T) {
	runner := &fakeRunner{child: func(delegate.ChildSpec) (delegate.Envelope, error) {
		return delegate.Envelope{Status: delegate.StatusDone}, nil
	}}
	ts := toolset(t, delegate.Deps{Runner: runner})
	vague := []string{"", "   ", "look into it", "check the code for bugs", "please investigate this problem",
		"fix it", "help me with something", "1 2 3 4 5", strings.Repeat("word ", 900)}
	for _, o := range vague {
		args, _ := json.Marshal(map[string]string{"objective": o, "mode": "scout"})
		ref := refusal(t, run(t, ts, "task", "t", string(args)), tools.TaskObjective)
		if ref.Message == "" {
			t.Errorf("%q: empty message", o)
		}
	}
	specific := []string{
		"Find where the config file is parsed and list its keys",
		"Fix the failing TestParse in parser_test.go",
		"Which packages import net/http directly?",
		"Résumé: trouve les appels à ParseConfig dans cmd/",
	}
	for _, o := range specific {
		args, _ := json.Marshal(map[string]string{"objective": o, "mode": "scout"})
		payload[delegate.TaskPayload](t, run(t, ts, "task", "t", string(args)))
	}
	if len(runner.specs) != len(specific) {
		t.Fatalf("ran %d children, want %d", len(runner.specs), len(specific))
	}
	if runner.specs[0].Objective != specific[0] {
		t.Fatalf("objective passed as %q", runner.specs[0].Objective)
	}
}

func TestNoRunnerNoTools(t *testing.T) {
	if d := delegate.Declarations(delegate.Deps{Repo: "/x", WorktreeRoot: "/y"}); len(d) != 0 {
		t.Fatalf("declared %d tools without a runner", len(d))
	}
}

func TestWorktreeRootInsideCheckout(t *testing.T) {
	repo, _ := setup(t)
	before := state(t, repo)
	runner := &fakeRunner{child: editingChild(t)}
	ts := toolset(t, delegate.Deps{Runner: runner, Repo: repo, WorktreeRoot: filepath.Join(repo, ".staage", "worktrees")})
	if err := delegate.NewWorktrees(repo, filepath.Join(repo, "wt")).Validate(context.Background()); err == nil {
		t.Fatal("Validate accepts a root inside the checkout")
	}
	if err := delegate.NewWorktrees(t.TempDir(), filepath.Join(repo, "..", "wt")).Validate(context.Background()); err == nil {
		t.Fatal("Validate accepts a main checkout that is not a repository")
	}
	if err := delegate.NewWorktrees(repo, filepath.Join(repo, "..", "wt")).Validate(context.Background()); err != nil {
		t.Fatalf("Validate refuses a good setup: %v", err)
	}
	ref := refusal(t, run(t, ts, "task", "t", `{"objective":"`+objective+`","mode":"write"}`), tools.ToolFailed)
	if !strings.Contains(ref.Message, "inside the main checkout") || len(runner.specs) != 0 {
		t.Fatalf("%q, ran %d", ref.Message, len(runner.specs))
	}
	if state(t, repo) != before {
		t.Fatal("main checkout changed")
	}
}

func TestConcurrentWriteChildren(t *testing.T) {
	repo, root := setup(t)
	runner := &fakeRunner{child: func(spec delegate.ChildSpec) (delegate.Envelope, error) {
		writeFile(t, filepath.Join(spec.Workdir, filepath.Base(spec.Workdir)+".txt"), "mine\n")
		return delegate.Envelope{Status: delegate.StatusDone}, nil
	}}
	ts := toolset(t, delegate.Deps{Runner: runner, Repo: repo, WorktreeRoot: root})
	const n = 3
	changes := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if ok, isOk := run(t, ts, "task", fmt.Sprint(i), `{"objective":"`+objective+`","mode":"write"}`).(tools.Ok); isOk {
				changes[i] = ok.Payload.(delegate.TaskPayload).Change
			}
		}()
	}
	wg.Wait()
	slices.Sort(changes)
	if !slices.Equal(changes, []string{"change-1", "change-2", "change-3"}) {
		t.Fatalf("changes %v", changes)
	}
	wt := delegate.NewWorktrees(repo, root)
	ids, err := wt.List(context.Background())
	if err != nil || !slices.Equal(ids, changes) {
		t.Fatalf("list %v %v", ids, err)
	}
	// Each change holds only its own child's file.
	for _, id := range ids {
		ch, err := wt.Diff(context.Background(), id)
		if err != nil || len(ch.Files) != 1 || ch.Files[0].Path != id+".txt" || ch.Files[0].Op != "create" {
			t.Fatalf("%s: %+v %v", id, ch.Files, err)
		}
	}
}

// A child whose file tools rewrite the worktree's .git file to point at the
// main repository must not make the diff stage into the main index.
func TestTamperedGitFile(t *testing.T) {
	repo, root := setup(t)
	before := state(t, repo)
	runner := &fakeRunner{child: func(spec delegate.ChildSpec) (delegate.Envelope, error) {
		writeFile(t, filepath.Join(spec.Workdir, "x.txt"), "x\n")
		writeFile(t, filepath.Join(spec.Workdir, ".git"), "gitdir: "+filepath.Join(repo, ".git")+"\n")
		return delegate.Envelope{Status: delegate.StatusDone}, nil
	}}
	ts := toolset(t, delegate.Deps{Runner: runner, Repo: repo, WorktreeRoot: root})
	p := payload[delegate.TaskPayload](t, run(t, ts, "task", "t", `{"objective":"`+objective+`","mode":"write"}`))
	if p.Change != "change-1" || !slices.Equal(p.Files, []string{"x.txt"}) {
		t.Fatalf("payload %+v", p)
	}
	if state(t, repo) != before {
		t.Fatal("the main checkout's index or files changed")
	}
}

func TestBinaryFileInChange(t *testing.T) {
	repo, root := setup(t)
	blob := []byte{0, 1, 2, 3, 0xff, 0xfe, 0, 'x'}
	runner := &fakeRunner{child: func(spec delegate.ChildSpec) (delegate.Envelope, error) {
		return delegate.Envelope{Status: delegate.StatusDone}, os.WriteFile(filepath.Join(spec.Workdir, "img.bin"), blob, 0o644)
	}}
	ts := toolset(t, delegate.Deps{Runner: runner, Repo: repo, WorktreeRoot: root})
	payload[delegate.TaskPayload](t, run(t, ts, "task", "t", `{"objective":"`+objective+`","mode":"write"}`))
	prev, ref := preview(t, ts, "a", "change-1")
	if ref != nil || len(prev.Files) != 1 || prev.Files[0].Op != tools.FileCreate || prev.Files[0].New != "" ||
		!strings.Contains(prev.Files[0].Unified, "Binary or large file img.bin") {
		t.Fatalf("preview %+v %v", prev, ref)
	}
	tool, call, _ := bind(t, ts, "apply_change", "a", `{"change":"change-1"}`)
	payload[delegate.ApplyPayload](t, tool.Handler().Run(context.Background(), call))
	if got, _ := os.ReadFile(filepath.Join(repo, "img.bin")); string(got) != string(blob) {
		t.Fatalf("binary content %v", got)
	}
}

// The operator's git configuration must not turn a clean apply into a
// conflict: trailing whitespace under apply.whitespace=error still lands.
func TestApplyIgnoresWhitespaceConfig(t *testing.T) {
	repo, root := setup(t)
	gitRun(t, repo, "config", "apply.whitespace", "error")
	runner := &fakeRunner{child: func(spec delegate.ChildSpec) (delegate.Envelope, error) {
		writeFile(t, filepath.Join(spec.Workdir, "ws.txt"), "trailing   \n")
		return delegate.Envelope{Status: delegate.StatusDone}, nil
	}}
	ts := toolset(t, delegate.Deps{Runner: runner, Repo: repo, WorktreeRoot: root})
	payload[delegate.TaskPayload](t, run(t, ts, "task", "t", `{"objective":"`+objective+`","mode":"write"}`))
	if _, ref := preview(t, ts, "a", "change-1"); ref != nil {
		t.Fatalf("preview: %v", ref)
	}
	tool, call, _ := bind(t, ts, "apply_change", "a", `{"change":"change-1"}`)
	payload[delegate.ApplyPayload](t, tool.Handler().Run(context.Background(), call))
	if readFile(t, filepath.Join(repo, "ws.txt")) != "trailing   \n" {
		t.Fatal("whitespace altered")
	}
}

// The schema offers write only with a worktree root; a call that reaches the
// handler anyway (the schema is the first fence, not the only one) is refused.
func TestWriteModeWithoutWorktreeRoot(t *testing.T) {
	ts := toolset(t, delegate.Deps{Runner: &fakeRunner{child: editingChild(t)}})
	tool, _ := ts.Lookup("task")
	if _, ref := tool.Bind("t", "main", json.RawMessage(`{"objective":"Rename the flag parser in cmd/ to parseFlags","mode":"write"}`)); ref == nil || ref.Name != tools.ArgsInvalid {
		t.Fatalf("schema let write through: %v", ref)
	}
	res := tool.Handler().Run(context.Background(), tools.Call{ID: "t", Lane: "main",
		Args: json.RawMessage(`{"mode":"write","objective":"Rename the flag parser in cmd/ to parseFlags"}`)})
	if r, ok := res.(*tools.Refusal); !ok || r.Name != tools.TaskMode {
		t.Fatalf("handler: %#v", res)
	}
}
