package tools

import "slices"

// Profile narrows a toolset for one thread or one turn. A nil Only keeps
// every tool; Without removes names from what Only kept. The wire carries
// the flag and the turn carries the profile.
type Profile struct {
	Name    string
	Only    []string
	Without []string
}

const fullProfileName = "full"

// Full is the parent thread's profile: every composed tool.
func Full() Profile { return Profile{Name: fullProfileName} }

// Scout is the read half of the catalog, for read-only child threads.
func Scout() Profile {
	return Profile{Name: "scout", Only: []string{
		"file_read", "file_find", "file_search", "skill_list", "skill_load",
		"bank_search", "bank_get", "research", "plan",
	}}
}

// WriteChild is a write child's set: read, edit and write in its worktree;
// no bash, no tests, no process.
func WriteChild() Profile {
	return Profile{Name: "write", Only: []string{"file_read", "file_edit", "file_write", "file_find", "file_search", "plan"}}
}

// SwitchOff returns p with the named tools removed for one turn.
func (p Profile) SwitchOff(names ...string) Profile {
	q := p
	q.Without = append(slices.Clone(p.Without), names...)
	return q
}

// Allows reports whether the profile keeps name.
func (p Profile) Allows(name string) bool {
	if p.Only != nil && !slices.Contains(p.Only, name) {
		return false
	}
	return !slices.Contains(p.Without, name)
}

// Narrow returns the tools of ts the profile keeps. The result shares the
// parent's tools, so digests and handlers are the same by construction.
func (ts *Toolset) Narrow(p Profile) *Toolset {
	out := &Toolset{}
	for _, t := range ts.tools {
		if p.Allows(t.Name) {
			out.tools = append(out.tools, t)
		}
	}
	return out
}
