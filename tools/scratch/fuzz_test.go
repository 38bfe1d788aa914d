package scratch

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"staage/tools"
)

// FuzzBuild: whatever args a model sends, an argv that is built holds only
// allowlisted flags before "--" and only paths inside the scratch dir after.
func FuzzBuild(f *testing.F) {
	for _, s := range [][]string{{"-n", "1", "notes.txt"}, {"-f", "x"}, {"--lines=3", "../secret"}, {"-la", "sub"},
		{"--", "-rf"}, {"-c", "%n", "outside-link"}, {"--files0-from=x"}, {"-L"}} {
		b, _ := json.Marshal(s)
		f.Add("head", string(b))
		f.Add("stat", string(b))
		f.Add("ls", string(b))
	}
	f.Fuzz(func(t *testing.T, command, argsJSON string) {
		var args []string
		if json.Unmarshal([]byte(argsJSON), &args) != nil {
			return
		}
		dir := fixture(t)
		raw, _ := json.Marshal(map[string]any{"command": command, "args": args})
		h := &handler{dir: dir}
		argv, root, ref := h.build(tools.Call{Args: raw})
		if ref != nil {
			return
		}
		sp := specs[command]
		dd := slices.Index(argv, "--")
		if argv[0] != command || dd < 0 {
			t.Fatalf("argv %q", argv)
		}
		for i := 1; i < dd; i++ {
			a := argv[i]
			switch {
			case strings.HasPrefix(a, "--"):
				name, _, _ := strings.Cut(a, "=")
				if _, valued := sp.valued[name]; !valued && !slices.Contains(sp.long, a) {
					t.Fatalf("flag %q slipped through: %q", a, argv)
				}
			case len(a) == 2 && a[0] == '-':
				if _, valued := sp.valued[a]; valued {
					i++ // its value
					continue
				}
				if !strings.Contains(sp.letters, a[1:]) {
					t.Fatalf("flag %q slipped through: %q", a, argv)
				}
			default:
				t.Fatalf("unexpected %q before --: %q", a, argv)
			}
		}
		for _, p := range argv[dd+1:] {
			real, err := filepath.EvalSymlinks(filepath.Join(root, p))
			if !strings.HasPrefix(p, "./") || err != nil || !within(root, real) {
				t.Fatalf("path %q escapes %s", p, root)
			}
		}
	})
}
