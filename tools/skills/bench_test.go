package skills_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"staage/tools/skills"
)

// BenchmarkScan measures one skill_list scan: 100 workspace cards and 100
// user cards (half shadowed), each with a small front matter.
func BenchmarkScan(b *testing.B) {
	base := b.TempDir()
	d := skills.Dirs{Workspace: filepath.Join(base, "ws"), User: filepath.Join(base, "user")}
	for i := range 100 {
		for _, root := range []string{d.Workspace, d.User} {
			name := fmt.Sprintf("card-%03d", i)
			if root == d.User && i%2 == 0 {
				name = fmt.Sprintf("user-card-%03d", i)
			}
			write(b, filepath.Join(root, name, "SKILL.md"), card(name, "A card used by the benchmark to measure scanning."))
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if cat := skills.Scan(d); len(cat.Cards) != 150 {
			b.Fatalf("%d cards", len(cat.Cards))
		}
	}
}
