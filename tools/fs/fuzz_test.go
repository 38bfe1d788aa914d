package fs

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"staage/tools"
)

// FuzzToolPaths throws arbitrary paths at file_read, file_write and
// file_edit through Bind and Run: every answer must be Ok or a typed
// refusal, never a panic, and nothing outside the workspace may appear or
// change. Seeds are checked in under testdata/fuzz/FuzzToolPaths.
func FuzzToolPaths(f *testing.F) {
	base := f.TempDir()
	dir := filepath.Join(base, "ws")
	outside := filepath.Join(base, "outside.txt")
	for _, d := range []string{dir + "/sub", base + "/ws-evil"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			f.Fatal(err)
		}
	}
	if err := os.WriteFile(outside, []byte("keep\n"), 0o644); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		f.Fatal(err)
	}
	for name, target := range map[string]string{"out": outside, "up": "..", "in": "sub", "evil": base + "/ws-evil"} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			f.Fatal(err)
		}
	}
	_, ts := openToolset(f, dir)
	known := map[tools.RefusalName]bool{
		tools.PathEscape: true, tools.ArgsInvalid: true, tools.FileMissing: true, tools.FileNotRegular: true,
		tools.FileExists: true, tools.FileStale: true, tools.FileBinary: true, tools.FileTooLarge: true,
	}
	f.Add("a.txt")
	f.Add("../outside.txt")
	f.Add("up/outside.txt")
	f.Fuzz(func(t *testing.T, p string) {
		for _, c := range []struct {
			name string
			args map[string]any
		}{
			{"file_read", map[string]any{"path": p}},
			{"file_write", map[string]any{"path": p, "content": "x"}},
			{"file_edit", map[string]any{"path": p, "digest": digestOf("a\n"), "old": "a", "new": "b"}},
		} {
			tool, _ := ts.Lookup(c.name)
			raw, err := json.Marshal(c.args)
			if err != nil {
				return
			}
			call, ref := tool.Bind("f", "fuzz", raw)
			var res tools.Result = ref
			if ref == nil {
				res = tool.Handler().Run(context.Background(), call)
			}
			if r, ok := res.(*tools.Refusal); ok && !known[r.Name] {
				t.Fatalf("%s(%q): refusal %s: %s", c.name, p, r.Name, r.Message)
			}
		}
		if b, _ := os.ReadFile(outside); string(b) != "keep\n" {
			t.Fatalf("%q: the file outside changed", p)
		}
		ents, _ := os.ReadDir(base)
		if len(ents) != 3 {
			t.Fatalf("%q: something was created next to the workspace: %v", p, ents)
		}
		if es, _ := os.ReadDir(base + "/ws-evil"); len(es) != 0 {
			t.Fatalf("%q: written into the sibling directory", p)
		}
	})
}
