package journal

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/adrg/xdg"

	"staage/agent"
)

// ErrNoSession is returned by Latest when the workspace has no session.
var ErrNoSession = errors.New("no session found")

// summaryScanLimit bounds how far List reads into a journal looking for the
// first prompt, so listing stays fast with huge sessions.
const summaryScanLimit = 1 << 20

// SessionsDir is where journals live: $XDG_STATE_HOME/staage/sessions
// (~/.local/state/staage/sessions by default).
func SessionsDir() (string, error) {
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" || !filepath.IsAbs(base) {
		// xdg reads the environment once at init; the check above honours
		// a variable set later (tests, a re-exec).
		base = xdg.StateHome
	}
	if base == "" {
		return "", errors.New("journal: no state directory (set XDG_STATE_HOME or HOME)")
	}
	return filepath.Join(base, "staage", "sessions"), nil
}

// Summary is one row of the session list.
type Summary struct {
	ID           string    `json:"id"`
	Path         string    `json:"path"`
	Workspace    string    `json:"workspace"`
	Provider     string    `json:"provider"`
	Started      time.Time `json:"started"`
	LastActivity time.Time `json:"lastActivity"`
	FirstPrompt  string    `json:"firstPrompt"`
	Size         int64     `json:"size"`
	// Problem is set when the header cannot be read; the row is still
	// listed so the operator sees the file.
	Problem string `json:"problem,omitempty"`
}

// List summarizes every journal in dir, most recently active first. A
// missing dir is an empty list.
func List(dir string) ([]Summary, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	var out []Summary
	for _, e := range ents {
		name := e.Name()
		id, ok := strings.CutSuffix(name, ".jsonl")
		if !ok || !e.Type().IsRegular() || !ValidID(id) {
			continue
		}
		s, err := summarize(filepath.Join(dir, name))
		if err != nil {
			continue // vanished between ReadDir and open
		}
		if s.ID == "" {
			s.ID = id
		}
		out = append(out, s)
	}
	slices.SortStableFunc(out, func(a, b Summary) int {
		if c := b.LastActivity.Compare(a.LastActivity); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	return out, nil
}

// Latest returns the journal path of the most recently active, resumable
// session whose workspace is workspace.
func Latest(dir, workspace string) (string, error) {
	list, err := List(dir)
	if err != nil {
		return "", err
	}
	want := filepath.Clean(workspace)
	for _, s := range list {
		if s.Problem == "" && filepath.Clean(s.Workspace) == want {
			return s.Path, nil
		}
	}
	return "", fmt.Errorf("journal: %w for workspace %s", ErrNoSession, workspace)
}

// Find resolves what an operator typed after --resume: a full session ID,
// or a unique prefix of one.
func Find(dir, idOrPrefix string) (string, error) {
	if p, err := PathFor(dir, idOrPrefix); err == nil {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	} else {
		return "", err
	}
	list, err := List(dir)
	if err != nil {
		return "", err
	}
	var hits []string
	for _, s := range list {
		if strings.HasPrefix(s.ID, idOrPrefix) {
			hits = append(hits, s.Path)
		}
	}
	switch len(hits) {
	case 0:
		return "", fmt.Errorf("journal: %w with id %q (see `staage sessions`)", ErrNoSession, idOrPrefix)
	case 1:
		return hits[0], nil
	default:
		return "", fmt.Errorf("journal: %q matches %d sessions; give more of the id", idOrPrefix, len(hits))
	}
}

// summarize reads the header and scans for the first prompt.
func summarize(path string) (Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return Summary{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Summary{}, err
	}
	s := Summary{Path: path, Size: st.Size(), LastActivity: st.ModTime().UTC()}
	br := bufio.NewReaderSize(io.LimitReader(f, summaryScanLimit), 64<<10)
	first, err := br.ReadBytes('\n')
	if err != nil {
		s.Problem = "no readable header (truncated?)"
		return s, nil
	}
	var h headerLine
	if json.Unmarshal(first, &h) != nil || h.Type != lineHeader || h.ID == "" {
		s.Problem = "no readable header (truncated, or not a staage journal)"
		return s, nil
	}
	s.ID, s.Workspace, s.Provider, s.Started = h.ID, h.Workspace, h.Provider, h.Started
	if h.Version > Version {
		s.Problem = fmt.Sprintf("written by a newer staage (format %d)", h.Version)
	}
	userPrefix := []byte(`{"type":"user"`)
	for {
		line, err := br.ReadBytes('\n')
		if bytes.HasPrefix(line, userPrefix) {
			if e, derr := agent.DecodeEvent(line); derr == nil {
				s.FirstPrompt = e.(agent.UserMessage).Text
				break
			}
		}
		if err != nil {
			break
		}
	}
	return s, nil
}
