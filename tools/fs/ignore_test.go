package fs

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestIgnoreRules(t *testing.T) {
	root := parseIgnore(nil, "", []byte("# comment\n\n*.log\n!important.log\n/top.txt\nbuild/\ndoc/*.md\n**/gen/**\nspace\\ \ntrailing   \n\\#hash\n\\!bang\n{x}\n[\n"))
	sub := parseIgnore(root, "pkg", []byte("*.tmp\n/local\n!keep.tmp\n"))
	tests := []struct {
		ig    *ignorer
		rel   string
		isDir bool
		want  bool
	}{
		{root, "a.log", false, true},
		{root, "deep/a.log", false, true},
		{root, "important.log", false, false},
		{root, "top.txt", false, true},
		{root, "sub/top.txt", false, false},
		{root, "build", true, true},
		{root, "build", false, false}, // dir-only rule, a file named build
		{root, "x/build", true, true},
		{root, "doc/a.md", false, true},
		{root, "doc/sub/a.md", false, false},
		{root, "x/gen/y.go", false, true},
		{root, "space ", false, true},
		{root, "trailing", false, true},
		{root, "#hash", false, true},
		{root, "!bang", false, true},
		{root, "{x}", false, true},
		{root, "x", false, false},
		{sub, "pkg/a.tmp", false, true},
		{sub, "pkg/keep.tmp", false, false},
		{sub, "pkg/local", false, true},
		{sub, "pkg/deeper/local", false, false},
		{sub, "pkg/z.log", false, true}, // the parent's rules still apply
	}
	for _, tt := range tests {
		name := tt.rel[strings.LastIndex(tt.rel, "/")+1:]
		if got := tt.ig.ignored(tt.rel, name, tt.isDir); got != tt.want {
			t.Errorf("ignored(%q, dir=%v) = %v, want %v", tt.rel, tt.isDir, got, tt.want)
		}
	}
	if parseIgnore(nil, "", []byte("# only comments\n\n")) != nil {
		t.Fatal("an empty .gitignore should add no level")
	}
}

// TestFindMatchesGit compares the walk with git's own idea of what is not
// ignored, on a tree with rules at several depths.
func TestFindMatchesGit(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	h := newHarness(t, map[string]string{
		".gitignore": "*.o\n/out/\nlogs/**\n!logs/keep\ntmp*\n*.bak\n!special.bak\nnode_modules\n",
		"main.c":     "", "main.o": "", "out/x": "", "src/out/y": "",
		"logs/a": "", "logs/keep": "", "tmp1": "", "src/tmp2/z": "",
		"src/.gitignore": "*.gen.go\n!ok.gen.go\n/only-here\n",
		"src/a.gen.go":   "", "src/ok.gen.go": "", "src/only-here": "", "src/deep/only-here": "",
		"x.bak": "", "special.bak": "", "node_modules/m/index.js": "",
		"src/lib/node_modules": "", "src/lib/b.go": "",
		"docs/.gitignore": "*\n!*.md\n!.gitignore\n",
		"docs/a.md":       "", "docs/b.txt": "",
		".git/info/exclude": "excluded-by-info\n",
		"excluded-by-info":  "",
	})
	cmd := exec.Command(git, "init", "-q", ".")
	cmd.Dir = h.dir
	// git init keeps the .git/info/exclude we wrote.
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	cmd = exec.Command(git, "ls-files", "--others", "--exclude-standard")
	cmd.Dir = h.dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Fields(string(out))
	got := ok[FindPayload](h, "file_find", map[string]any{"pattern": "**", "limit": 1000}).Paths
	slices.Sort(want)
	got = slices.Clone(got)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("file_find and git disagree\n ours %q\n git  %q", got, want)
	}
}
