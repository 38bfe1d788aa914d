package approvals

import (
	"os"
	"path/filepath"
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
