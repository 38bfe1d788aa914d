package journal

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Version is the journal format this build writes. A journal with a higher
// version was written by a newer staage: it can be listed and read, but not
// resumed (appending to it could mix two formats in one file).
const Version = 1

// Line types that belong to the journal itself rather than to the event
// stream. They share the "type" key with events so one reader walks both.
const (
	lineHeader  = "header"
	lineResumed = "resumed"
)

// Header is the first line of a journal: what the session ran with. It never
// holds credentials; Provider is a display name like
// "anthropic/claude-sonnet-4-5".
type Header struct {
	Version   int               `json:"version"`
	ID        string            `json:"id"`
	Workspace string            `json:"workspace"`
	Provider  string            `json:"provider"`
	Sandbox   string            `json:"sandbox"`
	Tools     map[string]string `json:"tools,omitempty"` // minted name → full digest
	Started   time.Time         `json:"started"`
}

// headerLine is the on-disk shape of the header: the type tag first.
type headerLine struct {
	Type string `json:"type"`
	Header
}

// resumedLine is appended each time a session is resumed: the provider and
// toolset it continues with. Readers fold it into Replay.Header so the next
// resume compares digests against what the session last ran with.
type resumedLine struct {
	Type     string            `json:"type"`
	At       time.Time         `json:"at"`
	Provider string            `json:"provider"`
	Sandbox  string            `json:"sandbox"`
	Tools    map[string]string `json:"tools,omitempty"`
}

func encodeHeader(h Header) ([]byte, error) {
	b, err := json.Marshal(headerLine{Type: lineHeader, Header: h})
	if err != nil {
		return nil, fmt.Errorf("journal header: %w", err)
	}
	return b, nil
}

// ErrInvalidID is returned for a session ID that is not a plain name.
var ErrInvalidID = errors.New("not a session id")

// NewID mints a session ID: a UTC timestamp (so IDs sort by start) and six
// random hex digits (so two sessions started in the same second differ).
func NewID(now time.Time) string {
	var r [3]byte
	_, _ = rand.Read(r[:]) // crypto/rand.Read never fails on supported platforms
	return now.UTC().Format("20060102T150405") + "-" + hex.EncodeToString(r[:])
}

// ValidID reports whether id is safe to use as a file name: non-empty,
// at most 64 bytes of [A-Za-z0-9._-], not starting with a dot. An ID from
// the command line goes through this before it becomes a path.
func ValidID(id string) bool {
	if id == "" || len(id) > 64 || id[0] == '.' {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// ChangedTools lists the tools whose digest differs between a session's
// toolset and the current one (or that are gone), sorted. Grants made for
// them do not carry over, and the console says so.
func ChangedTools(session, current map[string]string) []string {
	var out []string
	for name, d := range session {
		if current[name] != d {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
