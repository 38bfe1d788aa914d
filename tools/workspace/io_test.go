package workspace

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"staage/tools"
)

func TestReadFile(t *testing.T) {
	base, ws := fixture(t)
	app := filepath.Join(base, "app")
	f, err := ws.ReadFile("in-rel/f.txt", 1<<20)
	if err != nil || string(f.Data) != "f\n" || f.Rel != "sub/f.txt" {
		t.Fatalf("ReadFile = %+v, %v", f, err)
	}
	must(t, syscall.Mkfifo(filepath.Join(app, "fifo"), 0o644))
	l, err := net.Listen("unix", filepath.Join(app, "sock"))
	must(t, err)
	defer l.Close()
	must(t, os.WriteFile(filepath.Join(app, "big"), make([]byte, 2048), 0o644))

	tests := []struct {
		path string
		want tools.RefusalName
	}{
		{"missing.txt", tools.FileMissing},
		{"a.txt/below", tools.FileMissing},
		{"dangling", tools.FileMissing},
		{"sub", tools.FileNotRegular},
		{".", tools.FileNotRegular},
		{"fifo", tools.FileNotRegular},
		{"sock", tools.FileNotRegular},
		{"big", tools.FileTooLarge},
		{"out-abs", tools.PathEscape},
		{"../outside.txt", tools.PathEscape},
	}
	for _, tt := range tests {
		done := make(chan error, 1)
		go func() {
			_, err := ws.ReadFile(tt.path, 1024)
			done <- err
		}()
		select {
		case err := <-done:
			if got := refusalName(err); got != tt.want {
				t.Errorf("ReadFile(%q) = %v; want %s", tt.path, err, tt.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("ReadFile(%q) blocked", tt.path)
		}
	}
}

// TestReadFileDevice needs CAP_MKNOD; it is skipped where it is missing.
func TestReadFileDevice(t *testing.T) {
	_, ws := fixture(t)
	dev := filepath.Join(ws.Dir(), "null")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, int(1<<8|3)); err != nil {
		t.Skipf("mknod: %v", err)
	}
	if _, err := ws.ReadFile("null", 1024); refusalName(err) != tools.FileNotRegular {
		t.Fatalf("device read: %v", err)
	}
}

func TestWriteFileKeepsModeAndIsAtomic(t *testing.T) {
	_, ws := fixture(t)
	script := filepath.Join(ws.Dir(), "run.sh")
	must(t, os.WriteFile(script, []byte("#!/bin/sh\n"), 0o750))
	must(t, os.Chmod(script, 0o750))
	before, _ := os.Stat(script)
	rel, err := ws.WriteFile("run.sh", []byte("#!/bin/sh\necho hi\n"), WriteOptions{Overwrite: true})
	if err != nil || rel != "run.sh" {
		t.Fatalf("WriteFile = %q, %v", rel, err)
	}
	after, _ := os.Stat(script)
	if after.Mode() != before.Mode() {
		t.Fatalf("mode %v, want %v", after.Mode(), before.Mode())
	}
	if os.SameFile(before, after) {
		t.Fatal("file was written in place, not replaced by rename")
	}
	got, _ := os.ReadFile(script)
	if string(got) != "#!/bin/sh\necho hi\n" {
		t.Fatalf("content %q", got)
	}
	assertNoTemps(t, ws.Dir())
}

func TestWriteFileCreate(t *testing.T) {
	_, ws := fixture(t)
	if _, err := ws.WriteFile("a.txt", []byte("x"), WriteOptions{}); refusalName(err) != tools.FileExists {
		t.Fatalf("write over existing without overwrite: %v", err)
	}
	if _, err := ws.WriteFile("new/deep/x.go", []byte("x"), WriteOptions{}); err == nil {
		t.Fatal("write into a missing directory without MakeDirs succeeded")
	}
	rel, err := ws.WriteFile("new/deep/x.go", []byte("package x\n"), WriteOptions{MakeDirs: true})
	if err != nil || rel != "new/deep/x.go" {
		t.Fatalf("create = %q, %v", rel, err)
	}
	fi, err := os.Stat(filepath.Join(ws.Dir(), "new/deep/x.go"))
	if err != nil || fi.Mode().Perm() != NewFileMode {
		t.Fatalf("created file: %v %v", fi, err)
	}
	// A dangling link inside the root is created through.
	if _, err := ws.WriteFile("dangling", []byte("d"), WriteOptions{}); err != nil {
		t.Fatalf("write through dangling inside link: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws.Dir(), "not-yet")); string(b) != "d" {
		t.Fatalf("not-yet = %q", b)
	}
	if _, err := ws.WriteFile("sub", []byte("x"), WriteOptions{Overwrite: true}); refusalName(err) != tools.FileNotRegular {
		t.Fatalf("write over a directory: %v", err)
	}
	if _, err := ws.WriteFile(".", []byte("x"), WriteOptions{Overwrite: true}); refusalName(err) != tools.FileNotRegular {
		t.Fatalf("write over the root: %v", err)
	}
	assertNoTemps(t, ws.Dir())
}

// TestWriteFileRefusesSymlinkOut is the planted-symlink case: a link a
// sandboxed command left behind must not carry a write out of the root.
func TestWriteFileRefusesSymlinkOut(t *testing.T) {
	base, ws := fixture(t)
	for _, p := range []string{"out-abs", "out-rel", "sub/out", "out-sibling/secret", "out-proc", "dangling-out", "../outside.txt", filepath.Join(base, "outside.txt")} {
		if _, err := ws.WriteFile(p, []byte("pwned"), WriteOptions{Overwrite: true, MakeDirs: true}); refusalName(err) != tools.PathEscape {
			t.Errorf("WriteFile(%q) = %v; want path.escape", p, err)
		}
	}
	for _, f := range []string{"outside.txt", "app-evil/secret"} {
		b, _ := os.ReadFile(filepath.Join(base, f))
		if strings.Contains(string(b), "pwned") {
			t.Fatalf("%s was written", f)
		}
	}
	if _, err := os.Stat("/nonexistent-staage"); err == nil {
		t.Fatal("dangling-out target was created")
	}
	// A link that stays inside is written through: the target changes,
	// the link stays a link.
	if _, err := ws.WriteFile("in-up", []byte("via link\n"), WriteOptions{Overwrite: true}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws.Dir(), "a.txt")); string(b) != "via link\n" {
		t.Fatalf("a.txt = %q", b)
	}
	if fi, _ := os.Lstat(filepath.Join(ws.Dir(), "in-up")); fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("link was replaced")
	}
}

func TestWriteFileExpectDigest(t *testing.T) {
	_, ws := fixture(t)
	f, err := ws.ReadFile("a.txt", 1024)
	must(t, err)
	d := Digest(f.Data)
	must(t, os.WriteFile(filepath.Join(ws.Dir(), "a.txt"), []byte("changed\n"), 0o644))
	if _, err := ws.WriteFile("a.txt", []byte("mine\n"), WriteOptions{Overwrite: true, ExpectDigest: d}); refusalName(err) != tools.FileStale {
		t.Fatalf("stale write: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws.Dir(), "a.txt")); string(b) != "changed\n" {
		t.Fatalf("stale write changed the file: %q", b)
	}
	if _, err := ws.WriteFile("a.txt", []byte("mine\n"), WriteOptions{Overwrite: true, ExpectDigest: Digest([]byte("changed\n"))}); err != nil {
		t.Fatalf("fresh write: %v", err)
	}
	assertNoTemps(t, ws.Dir())
}

func TestSweepTemps(t *testing.T) {
	base, ws := fixture(t)
	dir := ws.Dir()
	// A temp-named file outside, reachable through the out-sibling link:
	// the sweep must not follow the link to it.
	outsideTemp := filepath.Join(base, "app-evil", TempPrefix+"outside")
	must(t, os.WriteFile(outsideTemp, []byte("x"), 0o600))
	must(t, os.MkdirAll(filepath.Join(dir, ".git"), 0o755))
	for _, p := range []string{TempPrefix + "1-a.txt", "sub/" + TempPrefix + "2-f.txt", ".git/" + TempPrefix + "keep"} {
		must(t, os.WriteFile(filepath.Join(dir, p), []byte("partial"), 0o600))
	}
	n, err := ws.SweepTemps(context.Background())
	if err != nil || n != 2 {
		t.Fatalf("SweepTemps = %d, %v", n, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", TempPrefix+"keep")); err != nil {
		t.Fatal("swept inside .git")
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); err != nil {
		t.Fatal("swept a real file")
	}
	if _, err := os.Stat(outsideTemp); err != nil {
		t.Fatal("swept through a symlink out of the root")
	}
	assertNoTemps(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ws.SweepTemps(ctx); err == nil {
		t.Fatal("cancelled sweep reported success")
	}
}

func TestIsBinary(t *testing.T) {
	if IsBinary([]byte("text\n")) || !IsBinary([]byte("a\x00b")) || IsBinary(nil) {
		t.Fatal("IsBinary")
	}
	late := append(make([]byte, 9<<10), 0)
	for i := range 9 << 10 {
		late[i] = 'a'
	}
	if IsBinary(late) {
		t.Fatal("NUL after 8 KiB counted")
	}
}

func assertNoTemps(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), TempPrefix) && !strings.Contains(p, "/.git/") {
			t.Errorf("temp file left: %s", p)
		}
		return nil
	})
}

// A temp file of a writer that is still running (another staage in the same
// workspace) is left alone; a dead writer's leftover is swept.
func TestSweepSparesLiveWriters(t *testing.T) {
	dir := t.TempDir()
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	live := exec.Command("sleep", "30")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { live.Process.Kill(); live.Wait() }()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	liveName := fmt.Sprintf("%sp%d-aa-x.txt", TempPrefix, live.Process.Pid)
	deadName := fmt.Sprintf("%sp%d-bb-x.txt", TempPrefix, dead.Process.Pid)
	for _, n := range []string{liveName, deadName} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	n, err := r.SweepTemps(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("swept %d, %v", n, err)
	}
	if _, err := os.Stat(filepath.Join(dir, liveName)); err != nil {
		t.Fatal("a live writer's temp was removed")
	}
	if _, err := os.Stat(filepath.Join(dir, deadName)); err == nil {
		t.Fatal("a dead writer's temp was kept")
	}
}
