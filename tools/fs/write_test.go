package fs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"staage/tools"
)

func TestWriteCreatesAndReplaces(t *testing.T) {
	h := newHarness(t, map[string]string{"old.txt": "old\n"})
	p := ok[WritePayload](h, "file_write", map[string]any{"path": "new/deep/n.txt", "content": "new\r\nfile"})
	if !p.Created || p.Path != "new/deep/n.txt" || p.Bytes != 9 || p.Digest != digestOf("new\r\nfile") {
		t.Fatalf("create %+v", p)
	}
	if h.read("new/deep/n.txt") != "new\r\nfile" {
		t.Fatal("content not written exactly")
	}
	if !strings.HasPrefix(p.Diff, "--- /dev/null\n+++ b/new/deep/n.txt\n") {
		t.Fatalf("create diff %q", p.Diff)
	}
	if fi, _ := os.Stat(h.path("new/deep/n.txt")); fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v", fi.Mode())
	}

	r := h.refused("file_write", map[string]any{"path": "old.txt", "content": "x"}, tools.FileExists)
	if r.Details["path"] != "old.txt" {
		t.Fatalf("details %+v", r.Details)
	}
	if h.read("old.txt") != "old\n" {
		t.Fatal("refused write changed the file")
	}
	args := map[string]any{"path": "old.txt", "content": "replaced\n", "overwrite": true}
	pv, err := h.preview("file_write", args)
	if err != nil {
		t.Fatal(err)
	}
	f := pv.Files[0]
	if f.Op != tools.FileReplace || f.Old != "old\n" || f.New != "replaced\n" || f.Digest != digestOf("old\n") {
		t.Fatalf("preview %+v", f)
	}
	if h.read("old.txt") != "old\n" {
		t.Fatal("preview wrote")
	}
	w := ok[WritePayload](h, "file_write", args)
	if w.Created || h.read("old.txt") != "replaced\n" || w.Diff != f.Unified {
		t.Fatalf("replace %+v", w)
	}
	cp, err := h.preview("file_write", map[string]any{"path": "brand.txt", "content": "b\n"})
	if err != nil || cp.Files[0].Op != tools.FileCreate || cp.Files[0].Digest != "" {
		t.Fatalf("create preview %+v %v", cp, err)
	}
	if _, err := os.Stat(h.path("brand.txt")); err == nil {
		t.Fatal("create preview wrote")
	}
}

// TestWriteRefusesPlantedSymlink: a link a sandboxed command planted must
// not carry the console's write out of the workspace.
func TestWriteRefusesPlantedSymlink(t *testing.T) {
	h := newHarness(t, nil)
	outside := filepath.Join(filepath.Dir(h.dir), "outside.txt")
	if err := os.WriteFile(outside, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, h.path("link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(h.dir), h.path("up")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"link", "up/outside.txt", "up/ws-evil/x", "../outside.txt", outside} {
		h.refused("file_write", map[string]any{"path": p, "content": "pwned", "overwrite": true}, tools.PathEscape)
		if _, err := h.preview("file_write", map[string]any{"path": p, "content": "pwned", "overwrite": true}); refusalOf(err) != tools.PathEscape {
			t.Fatalf("preview of %s: %v", p, err)
		}
	}
	if b, _ := os.ReadFile(outside); string(b) != "keep\n" {
		t.Fatal("outside file written")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(h.dir), "ws-evil")); err == nil {
		t.Fatal("sibling directory created")
	}
}

func TestWriteRefusals(t *testing.T) {
	h := newHarness(t, map[string]string{"dir/x": "x"})
	h.refused("file_write", map[string]any{"path": "dir", "content": "x", "overwrite": true}, tools.FileNotRegular)
	h.refused("file_write", map[string]any{"path": ".", "content": "x", "overwrite": true}, tools.FileNotRegular)
	h.refused("file_write", map[string]any{"path": "dir/x/below", "content": "x"}, tools.FileNotRegular)
	h.refused("file_write", map[string]any{"path": "a", "content": 5}, tools.ArgsInvalid)
	h.refused("file_write", map[string]any{"path": "a"}, tools.ArgsInvalid)
	h.refused("file_write", map[string]any{"path": "a", "content": "x", "mode": "0777"}, tools.ArgsInvalid)
}

// TestWritePreviewIsWhatRuns: a previewed file_write whose file changed
// before the run is file.stale; the same call unpreviewed, or previewed
// and unchanged, writes.
func TestWritePreviewIsWhatRuns(t *testing.T) {
	h := newHarness(t, map[string]string{"w.txt": "v1\n"})
	args := map[string]any{"path": "w.txt", "content": "mine\n", "overwrite": true}
	tool, call, ref := h.bind("file_write", args)
	if ref != nil {
		t.Fatal(ref)
	}
	pv := tool.Handler().(tools.Previewer)
	if _, err := pv.Preview(context.Background(), call); err != nil {
		t.Fatal(err)
	}
	h.write("w.txt", "v2 by someone else\n")
	res := tool.Handler().Run(context.Background(), call)
	if r, ok := res.(*tools.Refusal); !ok || r.Name != tools.FileStale {
		t.Fatalf("run after a change: %#v", res)
	}
	if h.read("w.txt") != "v2 by someone else\n" {
		t.Fatal("stale write happened")
	}
	// Previewed and unchanged: written.
	if _, err := pv.Preview(context.Background(), call); err != nil {
		t.Fatal(err)
	}
	if _, ok := tool.Handler().Run(context.Background(), call).(tools.Ok); !ok || h.read("w.txt") != "mine\n" {
		t.Fatal("previewed write did not run")
	}
	// A create that was previewed must not turn into an overwrite.
	cargs := map[string]any{"path": "c.txt", "content": "new\n", "overwrite": true}
	tool, ccall, _ := h.bind("file_write", cargs)
	if _, err := pv.Preview(context.Background(), ccall); err != nil {
		t.Fatal(err)
	}
	h.write("c.txt", "appeared\n")
	if r, ok := tool.Handler().Run(context.Background(), ccall).(*tools.Refusal); !ok || r.Name != tools.FileStale {
		t.Fatalf("create previewed, file appeared: %#v", r)
	}
	if h.read("c.txt") != "appeared\n" {
		t.Fatal("appeared file overwritten")
	}
}
