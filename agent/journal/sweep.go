package journal

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"

	"staage/agent"
)

// TempPrefix starts the name of every temp file staage creates for an
// atomic write (temp in the same directory, fsync, rename). A file with this
// prefix that outlived its writer is debris from a crash.
const TempPrefix = ".staage-tmp-"

const tempPrefix = TempPrefix

// staleAfter is how old a temp file must be before SweepTemps removes it
// from a directory another live process might be writing in.
const staleAfter = time.Minute

// SweepTemps removes leftover temp files of interrupted atomic writes
// directly in dir (not below it) that are older than olderThan, and
// returns the names removed. Temp journals of a session being created are
// locked by their writer and never removed.
func SweepTemps(dir string, olderThan time.Duration) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	now := time.Now()
	var removed []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), TempPrefix) || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil || now.Sub(info.ModTime()) < olderThan {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if inUse(p) {
			continue
		}
		if os.Remove(p) == nil {
			removed = append(removed, p)
		}
	}
	return removed
}

// inUse reports whether a temp file is locked by a live writer.
func inUse(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := lockFile(f); err != nil {
		return true
	}
	_ = unlockFile(f)
	return false
}

// SweepSessionsDir removes temp journals left by a session whose creation
// was interrupted (they are locked while their creator lives).
func SweepSessionsDir(dir string) []string { return SweepTemps(dir, 0) }

// SweepWorkspace removes temp files of interrupted atomic writes in a
// workspace: in its root and .staage directory if older than a minute
// (another staage may be writing there now), and without waiting in the
// directories of the files that r's interrupted calls were writing (their
// writer is known dead: the session was locked by it).
func SweepWorkspace(root string, r *Replay) []string {
	removed := SweepTemps(root, staleAfter)
	removed = append(removed, SweepTemps(filepath.Join(root, ".staage"), staleAfter)...)
	if r == nil {
		return removed
	}
	dirs := map[string]bool{}
	for _, d := range interruptedDirs(r) {
		if !dirs[d] {
			dirs[d] = true
			removed = append(removed, SweepTemps(filepath.Join(root, d), 0)...)
		}
	}
	return removed
}

// interruptedDirs are the workspace-relative directories named by the
// "path" argument of calls that started and never finished. Paths that are
// not local (absolute, or leaving the root) are ignored.
func interruptedDirs(r *Replay) []string {
	inputs := map[string]json.RawMessage{}
	for _, e := range r.Events {
		if c, ok := e.(agent.ToolCall); ok {
			inputs[c.Lane+"\x00"+c.ID] = c.Input
		}
	}
	var out []string
	for _, p := range r.Unanswered {
		if !p.Started {
			continue
		}
		var args struct {
			Path string `json:"path"`
		}
		if json.Unmarshal(inputs[p.Lane+"\x00"+p.ID], &args) != nil || args.Path == "" {
			continue
		}
		d := filepath.Dir(filepath.Clean(args.Path))
		if filepath.IsLocal(d) || d == "." {
			out = append(out, d)
		}
	}
	return out
}
