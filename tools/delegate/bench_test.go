package delegate_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"staage/tools/delegate"
)

// BenchmarkWorktreeCycle measures what one write child costs around the
// child itself: snapshot + worktree add, a one-file edit, Diff, Remove, on a
// repository of 500 committed files with a few uncommitted edits.
func BenchmarkWorktreeCycle(b *testing.B) {
	home := b.TempDir()
	b.Setenv("HOME", home)
	b.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(home, "gitconfig"))
	b.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	base := b.TempDir()
	repo, root := filepath.Join(base, "main"), filepath.Join(base, "wt")
	run := func(dir string, args ...string) {
		if out, err := gitCmd(dir, args...); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run(base, "init", "-q", "-b", "main", repo)
	run(repo, "config", "user.name", "Bench")
	run(repo, "config", "user.email", "bench@example.com")
	for i := range 500 {
		p := filepath.Join(repo, fmt.Sprintf("pkg%02d", i%20), fmt.Sprintf("f%03d.go", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(lines("file", 80)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	run(repo, "add", "-A")
	run(repo, "commit", "-q", "-m", "bench")
	if err := os.WriteFile(filepath.Join(repo, "pkg00", "f000.go"), []byte(lines("edited", 80)), 0o644); err != nil {
		b.Fatal(err)
	}
	wt := delegate.NewWorktrees(repo, root)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		w, err := wt.Create(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(w.Dir, "pkg01", "f001.go"), []byte("changed\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		ch, err := wt.Diff(ctx, w.ID)
		if err != nil || len(ch.Files) != 1 {
			b.Fatalf("%v %v", ch.Files, err)
		}
		if err := wt.Remove(ctx, w.ID); err != nil {
			b.Fatal(err)
		}
	}
}

func gitCmd(dir string, args ...string) ([]byte, error) {
	return exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
}
