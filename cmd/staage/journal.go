package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"staage/agent/journal"
)

// openJournal starts the session's journal: a new session, or with
// --continue (the latest session of this workspace) or --resume ID (an id or
// a unique prefix of one) the existing one, locked, read back and prepared
// for appending. The returned Replay is nil for a new session. What resume
// found that the operator should know (a torn tail, interrupted calls,
// swept temp files) is in Replay.Problems.
func openJournal(ctx context.Context, opts bootOptions, hdr journal.Header) (*journal.Writer, *journal.Replay, error) {
	if opts.Continue && opts.Resume != "" {
		return nil, nil, &exitError{code: 2, msg: "use --continue or --resume ID, not both"}
	}
	dir, err := journal.SessionsDir()
	if err != nil {
		return nil, nil, err
	}
	swept := journal.SweepSessionsDir(dir)
	if !opts.Continue && opts.Resume == "" {
		if hdr.ID == "" {
			hdr.ID = journal.NewID(time.Now())
		}
		if hdr.Started.IsZero() {
			hdr.Started = time.Now().UTC()
		}
		w, err := journal.Create(dir, hdr)
		if err != nil {
			return nil, nil, fmt.Errorf("session journal: %w", err)
		}
		return w, nil, nil
	}

	var path string
	if opts.Resume != "" {
		path, err = journal.Find(dir, opts.Resume)
	} else {
		path, err = journal.Latest(dir, hdr.Workspace)
	}
	if err != nil {
		if errors.Is(err, journal.ErrNoSession) || errors.Is(err, journal.ErrInvalidID) {
			return nil, nil, &exitError{code: 2, msg: err.Error()}
		}
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	w, r, err := journal.Open(path)
	if err != nil {
		if errors.Is(err, journal.ErrLocked) {
			return nil, nil, &exitError{code: 1, msg: err.Error()}
		}
		return nil, nil, err
	}
	if filepath.Clean(r.Header.Workspace) != filepath.Clean(hdr.Workspace) {
		w.Close()
		return nil, nil, &exitError{code: 2, msg: fmt.Sprintf(
			"session %s belongs to workspace %s, not %s; resume it with --workspace %s",
			r.Header.ID, r.Header.Workspace, hdr.Workspace, r.Header.Workspace)}
	}
	for _, p := range r.Unanswered {
		state := "was interrupted while running; it was not re-run (check its effects)"
		if !p.Started {
			state = "never ran; it was cancelled"
		}
		r.Problems = append(r.Problems, fmt.Sprintf("call %s (%s) on lane %s %s", p.ID, p.Tool, p.Lane, state))
	}
	if len(swept) > 0 {
		r.Problems = append(r.Problems, fmt.Sprintf("removed %d temporary journal file(s) left by an interrupted start", len(swept)))
	}
	if err := w.MarkResumed(hdr); err != nil {
		w.Close()
		return nil, nil, err
	}
	return w, r, nil
}
