package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"staage/tools"
)

// fixture builds base/app (the workspace) next to base/app-evil and
// base/outside.txt, with links of every kind inside app.
func fixture(t *testing.T) (base string, ws *Root) {
	t.Helper()
	base = t.TempDir()
	app := filepath.Join(base, "app")
	must(t, os.MkdirAll(filepath.Join(app, "sub", "deep"), 0o755))
	must(t, os.MkdirAll(filepath.Join(base, "app-evil"), 0o755))
	must(t, os.WriteFile(filepath.Join(app, "a.txt"), []byte("a\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(app, "sub", "f.txt"), []byte("f\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(base, "app-evil", "secret"), []byte("s\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(base, "outside.txt"), []byte("o\n"), 0o644))
	links := map[string]string{
		"in-rel":       "sub",
		"in-abs":       filepath.Join(app, "sub"),
		"in-up":        "sub/deep/../../a.txt",
		"sub/up":       "../a.txt",
		"out-rel":      "../outside.txt",
		"out-abs":      filepath.Join(base, "outside.txt"),
		"out-sibling":  filepath.Join(base, "app-evil"),
		"out-proc":     "/proc/self/root" + filepath.Join(base, "outside.txt"),
		"out-root":     "/",
		"out-chain":    "in-rel/../../app-evil/secret",
		"loop":         "loop",
		"dangling":     "not-yet",
		"dangling-out": "/nonexistent-staage",
		"sub/out":      "../../outside.txt",
	}
	for name, target := range links {
		must(t, os.Symlink(target, filepath.Join(app, name)))
	}
	r, err := Open(app)
	must(t, err)
	t.Cleanup(func() { r.Close() })
	return base, r
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func refusalName(err error) tools.RefusalName {
	var r *tools.Refusal
	if errors.As(err, &r) {
		return r.Name
	}
	return ""
}

func TestResolve(t *testing.T) {
	base, ws := fixture(t)
	app := filepath.Join(base, "app")
	ok := map[string]string{
		"a.txt":                                  "a.txt",
		"./a.txt":                                "a.txt",
		"sub/../a.txt":                           "a.txt",
		"sub/deep/../f.txt":                      "sub/f.txt",
		"":                                       ".",
		".":                                      ".",
		"sub/":                                   "sub",
		"in-rel/f.txt":                           "sub/f.txt",
		"in-abs/f.txt":                           "sub/f.txt",
		"in-up":                                  "a.txt",
		"sub/up":                                 "a.txt",
		"new/dir/file.go":                        "new/dir/file.go",
		"new/../file.go":                         "file.go",
		"dangling":                               "not-yet",
		"a.txt/impossible":                       "a.txt/impossible",
		filepath.Join(app, "a.txt"):              "a.txt",
		filepath.Join(app, "in-rel", "f"):        "sub/f",
		app:                                      ".",
		app + "/":                                ".",
		filepath.Join(app, "sub", "..", "a.txt"): "a.txt",
	}
	for in, want := range ok {
		got, err := ws.Resolve(in)
		if err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	escapes := []string{
		"..",
		"../",
		"../outside.txt",
		"../app-evil/secret",
		"../app/a.txt", // leaves the root before it comes back
		"sub/../../outside.txt",
		"a/b/../../../x",
		"/etc/passwd",
		"/",
		filepath.Join(base, "outside.txt"),
		filepath.Join(base, "app-evil", "secret"),
		filepath.Join(base, "app-evil"),
		base,
		"/proc/self/root" + filepath.Join(app, "a.txt"),
		"/proc/self/cwd/a.txt",
		"out-rel",
		"out-abs",
		"out-sibling/secret",
		"out-sibling",
		"out-proc",
		"out-root",
		"out-root/etc/passwd",
		"out-chain",
		"dangling-out",
		"sub/out",
		"in-rel/../../outside.txt",
		"loop",
	}
	for _, in := range escapes {
		got, err := ws.Resolve(in)
		if refusalName(err) != tools.PathEscape {
			t.Errorf("Resolve(%q) = %q, %v; want path.escape", in, got, err)
		}
	}
	for _, in := range []string{"a\x00b", strings.Repeat("a/", MaxPathLen)} {
		if _, err := ws.Resolve(in); refusalName(err) != tools.ArgsInvalid {
			t.Errorf("Resolve(%.20q) = %v; want args.invalid", in, err)
		}
	}
}

// TestResolveThroughSymlinkedRoot opens the workspace by a symlink's name
// and accepts absolute paths in either spelling.
func TestResolveThroughSymlinkedRoot(t *testing.T) {
	base, _ := fixture(t)
	alias := filepath.Join(base, "alias")
	must(t, os.Symlink(filepath.Join(base, "app"), alias))
	ws, err := Open(alias)
	must(t, err)
	defer ws.Close()
	if ws.Dir() != filepath.Join(base, "app") {
		t.Fatalf("Dir() = %q", ws.Dir())
	}
	for _, p := range []string{filepath.Join(alias, "a.txt"), filepath.Join(base, "app", "a.txt")} {
		if got, err := ws.Resolve(p); err != nil || got != "a.txt" {
			t.Errorf("Resolve(%q) = %q, %v", p, got, err)
		}
	}
	if _, err := ws.Resolve(filepath.Join(base, "alias-evil", "x")); refusalName(err) != tools.PathEscape {
		t.Errorf("sibling of alias: %v", err)
	}
}

func TestOpenRefusesNonDirectory(t *testing.T) {
	base, _ := fixture(t)
	if _, err := Open(filepath.Join(base, "outside.txt")); err == nil {
		t.Fatal("Open on a file succeeded")
	}
	if _, err := Open(filepath.Join(base, "missing")); err == nil {
		t.Fatal("Open on a missing dir succeeded")
	}
}

// FuzzResolve checks the invariant: whatever the input, an accepted path is
// clean, relative, and (when it exists) really lies inside the root. Seeds
// beyond these are checked in under testdata/fuzz/FuzzResolve.
func FuzzResolve(f *testing.F) {
	base := f.TempDir()
	app := filepath.Join(base, "app")
	for _, d := range []string{"app/sub/deep", "app-evil"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			f.Fatal(err)
		}
	}
	for _, p := range []string{filepath.Join(app, "a.txt"), filepath.Join(base, "outside.txt")} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			f.Fatal(err)
		}
	}
	for name, target := range map[string]string{
		"in-rel": "sub", "out-rel": "../outside.txt", "out-sibling": filepath.Join(base, "app-evil"),
		"out-chain": "in-rel/../../app-evil", "loop": "loop", "sub/up": "..", "sub/deep/out": "../../..",
		"out-proc": "/proc/self/root" + base, "in-abs": app,
	} {
		if err := os.Symlink(target, filepath.Join(app, name)); err != nil {
			f.Fatal(err)
		}
	}
	ws, err := Open(app)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { ws.Close() })
	f.Add("a.txt")
	f.Add("../outside.txt")
	f.Add(filepath.Join(app, "in-abs", "a.txt"))
	f.Add(app + "-evil/x")
	f.Fuzz(func(t *testing.T, p string) {
		rel, err := ws.Resolve(p)
		if err != nil {
			if n := refusalName(err); n != tools.PathEscape && n != tools.ArgsInvalid {
				t.Fatalf("Resolve(%q): untyped error %v", p, err)
			}
			return
		}
		if filepath.IsAbs(rel) || isDotDot(rel) || filepath.Clean(rel) != rel {
			t.Fatalf("Resolve(%q) = %q: not clean and relative", p, rel)
		}
		real, err := filepath.EvalSymlinks(filepath.Join(ws.Dir(), rel))
		if err != nil {
			return // does not exist (yet): nothing to follow
		}
		if r, err := filepath.Rel(ws.Dir(), real); err != nil || isDotDot(r) {
			t.Fatalf("Resolve(%q) = %q, which is really %q outside the root", p, rel, real)
		}
	})
}
