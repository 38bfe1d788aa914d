// Package notes holds the two tools that write the console's own state rather
// than the workspace: plan (the turn's steps, a reading for the human) and
// desk (one markdown workdesk page per lane). Both are NEVER-policy,
// idempotent-write tools: a call replaces the whole value, so repeating it
// changes nothing.
package notes

import (
	"slices"
	"sort"
	"sync"

	"staage/tools"
)

// Store keeps the plan and the desk page of every lane. It is safe for
// concurrent lanes: a parent and its children write their own lanes at the
// same time.
type Store struct {
	mu    sync.Mutex
	lanes map[string]*laneState
}

type laneState struct {
	steps []tools.PlanStep
	page  string
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{lanes: map[string]*laneState{}}
}

// lane returns the state of a lane, creating it; callers hold mu.
func (s *Store) lane(name string) *laneState {
	if s.lanes == nil {
		s.lanes = map[string]*laneState{}
	}
	l, ok := s.lanes[name]
	if !ok {
		l = &laneState{}
		s.lanes[name] = l
	}
	return l
}

// Plan returns a copy of the lane's plan (nil when none was declared).
func (s *Store) Plan(lane string) []tools.PlanStep {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.lanes[lane]; ok {
		return slices.Clone(l.steps)
	}
	return nil
}

// Desk returns the lane's desk page ("" when none was written).
func (s *Store) Desk(lane string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.lanes[lane]; ok {
		return l.page
	}
	return ""
}

// SetPlan replaces the lane's plan with a copy of steps.
func (s *Store) SetPlan(lane string, steps []tools.PlanStep) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lane(lane).steps = slices.Clone(steps)
}

// SetDesk replaces the lane's desk page and reports the page it replaced.
func (s *Store) SetDesk(lane, page string) (previous string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.lane(lane)
	previous, l.page = l.page, page
	return previous
}

// Restore puts back a lane's plan and page as a journal replay found them,
// so a resumed session reads what the model last wrote. It does not
// validate: the journal recorded values the tools had already accepted.
func (s *Store) Restore(lane string, steps []tools.PlanStep, page string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.lane(lane)
	l.steps = slices.Clone(steps)
	l.page = page
}

// Lanes lists the lanes that hold a plan or a page, sorted.
func (s *Store) Lanes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for name, l := range s.lanes {
		if len(l.steps) > 0 || l.page != "" {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}
