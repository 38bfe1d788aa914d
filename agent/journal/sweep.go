package journal

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

// TempPrefix starts the name of every temp file staage creates for an
// atomic write (the same prefix as tools/workspace, which sweeps the
// workspace). A file with this prefix that outlived its writer is debris
// from a crash.
const TempPrefix = ".staage-tmp-"

const tempPrefix = TempPrefix

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
// was interrupted. A creator locks its temp file at once, but a file younger
// than a few seconds is left alone too: it may be one created a moment ago
// and not locked yet.
func SweepSessionsDir(dir string) []string { return SweepTemps(dir, 5*time.Second) }
