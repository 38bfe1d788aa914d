package journal

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"staage/agent"
)

func TestSessionsDirHonoursXDGStateHome(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/tmp/xdg-state-test")
	d, err := SessionsDir()
	if err != nil || d != "/tmp/xdg-state-test/staage/sessions" {
		t.Fatalf("SessionsDir %q %v", d, err)
	}
	t.Setenv("XDG_STATE_HOME", "relative/ignored")
	d, err = SessionsDir()
	if err != nil || !filepath.IsAbs(d) || !strings.HasSuffix(d, "staage/sessions") {
		t.Fatalf("relative XDG_STATE_HOME must be ignored: %q %v", d, err)
	}
}

func mkSession(t *testing.T, dir, id, ws, prompt string, mtime time.Time) string {
	t.Helper()
	h := testHeader(id)
	h.Workspace = ws
	w, err := Create(dir, h)
	if err != nil {
		t.Fatal(err)
	}
	w.Publish(agent.UsageReport{Lane: "main"})
	if prompt != "" {
		w.Publish(agent.UserMessage{Lane: "main", Text: prompt})
		w.Publish(agent.UserMessage{Lane: "main", Text: "second prompt"})
	}
	w.Close()
	if err := os.Chtimes(w.Path(), mtime, mtime); err != nil {
		t.Fatal(err)
	}
	return w.Path()
}

func TestListLatestFind(t *testing.T) {
	dir := t.TempDir()
	base := time.Now().Add(-10 * time.Minute).Truncate(time.Second).UTC()
	mkSession(t, dir, "20261130T100000-aaaaaa", "/w/a", "first in a", base.Add(-3*time.Hour))
	newestA := mkSession(t, dir, "20261130T110000-bbbbbb", "/w/a", "second in a", base.Add(-1*time.Hour))
	mkSession(t, dir, "20261130T113000-cccccc", "/w/b", "", base)
	os.WriteFile(filepath.Join(dir, "broken.jsonl"), []byte("{\"type\":\"hea"), 0o600)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o600)
	os.WriteFile(filepath.Join(dir, TempPrefix+"zzz.jsonl"), []byte("x"), 0o600)

	list, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range list {
		ids = append(ids, s.ID)
	}
	// broken.jsonl has the newest mtime (just written): it lists first.
	if strings.Join(ids, ",") != "broken,20261130T113000-cccccc,20261130T110000-bbbbbb,20261130T100000-aaaaaa" {
		t.Fatalf("order %v", ids)
	}
	if list[0].Problem == "" {
		t.Error("broken session has no problem")
	}
	a := list[2]
	if a.Workspace != "/w/a" || a.FirstPrompt != "second in a" || a.Provider != "script/demo" || a.Size == 0 || a.Started.IsZero() || !a.LastActivity.Equal(base.Add(-time.Hour)) {
		t.Errorf("summary %+v", a)
	}
	if list[1].FirstPrompt != "" {
		t.Errorf("no prompt expected, got %q", list[1].FirstPrompt)
	}

	if p, err := Latest(dir, "/w/a/"); err != nil || p != newestA {
		t.Errorf("Latest /w/a: %q %v", p, err)
	}
	if _, err := Latest(dir, "/w/none"); !errors.Is(err, ErrNoSession) {
		t.Errorf("Latest none: %v", err)
	}
	if _, err := Latest(filepath.Join(dir, "missing"), "/w/a"); !errors.Is(err, ErrNoSession) {
		t.Errorf("Latest in a missing dir: %v", err)
	}

	if p, err := Find(dir, "20261130T110000-bbbbbb"); err != nil || p != newestA {
		t.Errorf("Find full: %q %v", p, err)
	}
	if p, err := Find(dir, "20261130T11000"); err != nil || p != newestA {
		t.Errorf("Find prefix: %q %v", p, err)
	}
	if _, err := Find(dir, "20261130T1"); err == nil || !strings.Contains(err.Error(), "matches 3 sessions") {
		t.Errorf("Find ambiguous: %v", err)
	}
	if _, err := Find(dir, "../etc/passwd"); err == nil {
		t.Error("Find accepted a path")
	}
	if _, err := Find(dir, "nothing"); !errors.Is(err, ErrNoSession) {
		t.Errorf("Find nothing: %v", err)
	}
}

func TestSweepSessionsDir(t *testing.T) {
	// A temp journal whose creator is alive (locked) survives the sweep;
	// one whose creator died is removed.
	dir := t.TempDir()
	f, err := os.CreateTemp(dir, TempPrefix+"live-*")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := lockFile(f); err != nil {
		t.Fatal(err)
	}
	dead := filepath.Join(dir, TempPrefix+"dead-1")
	os.WriteFile(dead, nil, 0o600)
	old := time.Now().Add(-time.Minute)
	os.Chtimes(dead, old, old)
	os.Chtimes(f.Name(), old, old)
	young := filepath.Join(dir, TempPrefix+"young-1")
	os.WriteFile(young, nil, 0o600)
	keep := filepath.Join(dir, "s.jsonl")
	os.WriteFile(keep, nil, 0o600)
	if got := SweepSessionsDir(dir); len(got) != 1 || got[0] != dead {
		t.Errorf("SweepSessionsDir removed %v", got)
	}
	if _, err := os.Stat(f.Name()); err != nil {
		t.Errorf("live temp removed: %v", err)
	}
	if _, err := os.Stat(young); err != nil {
		t.Errorf("a temp file just created was removed: %v", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("journal removed: %v", err)
	}
	fresh := filepath.Join(dir, TempPrefix+"fresh")
	os.WriteFile(fresh, nil, 0o600)
	if got := SweepTemps(dir, time.Hour); len(got) != 0 {
		t.Errorf("fresh temp swept with an age limit: %v", got)
	}
}
