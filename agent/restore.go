package agent

import (
	"fmt"

	"staage/approvals"
	"staage/tools"
)

// Restored says what resuming a session found.
type Restored struct {
	// Interrupted counts calls a crash cut off; each was answered with a
	// tool.interrupted refusal and none was re-run.
	Interrupted int
	// Grants counts session grants carried over.
	Grants int
	// Notes are lines for the operator (grants not carried over, ...).
	Notes []string
}

// Restore replays journaled events into the state, without publishing them
// again. Then it answers every call that started (or was made) without a
// result as interrupted, publishing those answers so the journal records
// them, and carries session grants over only where the tool's digest is
// unchanged. Call it before the first turn.
func (s *Session) Restore(events []Event) Restored {
	var r Restored
	s.pubMu.Lock()
	for _, e := range events {
		s.state.Apply(e)
	}
	s.pubMu.Unlock()

	for _, p := range s.state.Unanswered() {
		r.Interrupted++
		s.publishResult(p.Lane, p.Call.ID, p.Call.Name, tools.Refuse(tools.ToolInterrupted,
			"this call was cut off when the previous session ended (a crash or a kill); it did not complete and was not re-run"))
	}
	r.Grants, r.Notes = s.restoreGrants(events)
	return r
}

func (s *Session) restoreGrants(events []Event) (int, []string) {
	if s.cfg.Gate == nil || s.cfg.Toolset == nil {
		return 0, nil
	}
	n := 0
	var notes []string
	seen := map[string]bool{}
	for _, e := range events {
		d, ok := e.(ApprovalDecided)
		if !ok || d.Decision != string(approvals.Approve) {
			continue
		}
		if d.Scope != string(approvals.ScopeSession) && d.Scope != string(approvals.ScopeAlways) {
			continue
		}
		key := d.Tool + "\x00" + d.Digest + "\x00" + d.Prefix
		if seen[key] {
			continue
		}
		seen[key] = true
		tool, ok := s.cfg.Toolset.Lookup(d.Tool)
		if !ok {
			notes = append(notes, fmt.Sprintf("grant for %s not carried over: the tool is no longer offered", d.Tool))
			continue
		}
		if tool.Digest.String() != d.Digest {
			notes = append(notes, fmt.Sprintf("grant for %s not carried over: its descriptor changed (%s was granted, now %s); it will ask again",
				d.Tool, shortDigest(d.Digest), tool.Digest.Short()))
			continue
		}
		s.cfg.Gate.GrantSession(approvals.Grant{Tool: d.Tool, Digest: tool.Digest, Prefix: d.Prefix})
		n++
	}
	return n, notes
}

func shortDigest(full string) string {
	if len(full) >= len("sha256:")+12 {
		return full[:len("sha256:")+12]
	}
	return full
}
