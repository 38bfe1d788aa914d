package approvals

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"staage/tools"
)

func TestWorldReadableKeyIsRefused(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "grant-key")
	if _, err := OpenGrantFile(t.TempDir(), key); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(key, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := OpenGrantFile(t.TempDir(), key)
	if err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a world-readable key was accepted: %v", err)
	}
}

func TestGrantsFollowTheRealWorkspace(t *testing.T) {
	key := filepath.Join(t.TempDir(), "grant-key")
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	gf, err := OpenGrantFile(real, key)
	if err != nil {
		t.Fatal(err)
	}
	g := Grant{Tool: "bash", Digest: tools.Digest{1, 2, 3}}
	if err := gf.Add(g); err != nil {
		t.Fatal(err)
	}
	again, err := OpenGrantFile(link, key)
	if err != nil {
		t.Fatal(err)
	}
	if got := again.Grants(); len(got) != 1 || got[0] != g || len(again.Problems()) != 0 {
		t.Fatalf("through a symlinked path: grants %v problems %v", got, again.Problems())
	}
}

// Two staage processes on one workspace each add a grant: neither loses the
// other's, because Add merges what is on disk under a lock.
func TestConcurrentWritersKeepEachOthersGrants(t *testing.T) {
	key := filepath.Join(t.TempDir(), "grant-key")
	ws := t.TempDir()
	a, err := OpenGrantFile(ws, key)
	if err != nil {
		t.Fatal(err)
	}
	b, err := OpenGrantFile(ws, key) // opened before a writes anything
	if err != nil {
		t.Fatal(err)
	}
	ga := Grant{Tool: "bash", Digest: tools.Digest{1}, Prefix: "go test"}
	gb := Grant{Tool: "file_edit", Digest: tools.Digest{2}}
	if err := a.Add(ga); err != nil {
		t.Fatal(err)
	}
	if err := b.Add(gb); err != nil {
		t.Fatal(err)
	}
	c, err := OpenGrantFile(ws, key)
	if err != nil {
		t.Fatal(err)
	}
	got := c.Grants()
	if len(got) != 2 || !slices.Contains(got, ga) || !slices.Contains(got, gb) {
		t.Fatalf("grants on disk %v, want both", got)
	}
}
