package fs

import (
	"context"
	"os"
	"slices"
	"testing"

	"staage/tools"
)

// findTree has ignored files at several depths, hidden files, a .git
// directory and links.
func findTree(t *testing.T) *harness {
	h := newHarness(t, map[string]string{
		".gitignore":            "*.log\n/build/\nvendor/\n!keep.log\nsecret*\n",
		"a.go":                  "",
		"a/b.go":                "",
		"a/b_test.go":           "",
		"a/c/d.go":              "",
		"a/.gitignore":          "*_test.go\n!c/\n",
		"a/c/e_test.go":         "",
		"a.txt":                 "",
		"x.log":                 "",
		"keep.log":              "",
		"build/out.go":          "",
		"sub/build/kept.go":     "",
		"vendor/v.go":           "",
		"sub/vendor/v.go":       "",
		".hidden/h.go":          "",
		".git/HEAD":             "",
		".git/objects/o.go":     "",
		"secret.go":             "",
		"docs/{braces}.md":      "",
		"deep/1/2/3/4/5/six.go": "",
	})
	if err := os.Symlink("a.go", h.path("link.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", h.path("etc")); err != nil {
		t.Fatal(err)
	}
	return h
}

func TestFindRespectsGitignoreAndSorts(t *testing.T) {
	h := findTree(t)
	p := ok[FindPayload](h, "file_find", map[string]any{"pattern": "**/*.go"})
	// a/c/e_test.go: "!c/" re-includes the directory, not what
	// "*_test.go" ignores inside it (as git does).
	want := []string{".hidden/h.go", "a/b.go", "a/c/d.go", "a.go", "deep/1/2/3/4/5/six.go", "link.go", "sub/build/kept.go"}
	if !slices.Equal(p.Paths, want) {
		t.Fatalf("paths\n got %q\nwant %q", p.Paths, want)
	}
	if p.Truncated || p.NextCursor != "" || p.ScanCapped {
		t.Fatalf("bounds %+v", p.Bounds)
	}
	same := ok[FindPayload](h, "file_find", map[string]any{"pattern": "*.go"})
	if !slices.Equal(same.Paths, want) {
		t.Fatalf("*.go differs from **/*.go: %q", same.Paths)
	}
	cases := map[string][]string{
		"a/*.go":           {"a/b.go"},
		"a/**":             {"a/.gitignore", "a/b.go", "a/c/d.go"},
		"*.log":            {"keep.log"},
		"deep/**/six.go":   {"deep/1/2/3/4/5/six.go"},
		"**/c/*":           {"a/c/d.go"},
		"*.{txt,md}":       {"a.txt", "docs/{braces}.md"},
		"./a.go":           {"a.go"},
		"nothing-matches*": {},
		"etc":              {"etc"},
		"etc/passwd":       {},
	}
	for pat, want := range cases {
		p := ok[FindPayload](h, "file_find", map[string]any{"pattern": pat})
		if !slices.Equal(p.Paths, want) {
			t.Errorf("%s: got %q want %q", pat, p.Paths, want)
		}
	}
}

func TestFindPages(t *testing.T) {
	h := findTree(t)
	all := ok[FindPayload](h, "file_find", map[string]any{"pattern": "**"}).Paths
	for _, limit := range []int{1, 2, 3, 7} {
		var got []string
		args := map[string]any{"pattern": "**", "limit": limit}
		for pages := 0; ; pages++ {
			if pages > len(all)+1 {
				t.Fatal("paging does not end")
			}
			p := ok[FindPayload](h, "file_find", args)
			if len(p.Paths) > limit {
				t.Fatalf("page of %d > limit %d", len(p.Paths), limit)
			}
			got = append(got, p.Paths...)
			if !p.Truncated {
				break
			}
			args["cursor"] = p.NextCursor
		}
		if !slices.Equal(got, all) {
			t.Fatalf("limit %d: pages give %q, want %q", limit, got, all)
		}
	}
	if !slices.IsSortedFunc(all, func(a, b string) int {
		if pathLess(a, b) {
			return -1
		}
		return 1
	}) {
		t.Fatalf("not in path order: %q", all)
	}
}

func TestFindScanCapped(t *testing.T) {
	h := findTree(t)
	m, _ := compileGlob("**")
	p, err := find(context.Background(), h.ws, m, cursor{}, 100, 4)
	if err != nil {
		t.Fatal(err)
	}
	if !p.ScanCapped || p.NextCursor == "" || p.Truncated {
		t.Fatalf("bounds %+v", p.Bounds)
	}
	// Resuming from the capped cursor continues where the scan stopped.
	c, _ := decodeCursor(p.NextCursor)
	q, err := find(context.Background(), h.ws, m, c, 100, 0)
	if err != nil || len(q.Paths) == 0 || slices.Contains(q.Paths, p.Paths[len(p.Paths)-1]) {
		t.Fatalf("resume %+v %v", q, err)
	}
}

func TestFindRefusals(t *testing.T) {
	h := findTree(t)
	for _, pat := range []string{"[", "a/../../x", "../*"} {
		h.refused("file_find", map[string]any{"pattern": pat}, tools.FindInvalid)
	}
	h.refused("file_find", map[string]any{"pattern": "*", "cursor": "not-a-cursor!"}, tools.FindInvalid)
	h.refused("file_find", map[string]any{"pattern": "*", "cursor": "e30"}, tools.FindInvalid) // {}
	h.refused("file_find", map[string]any{"pattern": "*", "limit": 0}, tools.ArgsInvalid)
	h.refused("file_find", map[string]any{"pattern": "*", "limit": MaxFindLimit + 1}, tools.ArgsInvalid)
	h.refused("file_find", map[string]any{"pattern": ""}, tools.ArgsInvalid)
	h.refused("file_find", map[string]any{"pattern": "*", "path": "/"}, tools.ArgsInvalid)
}
