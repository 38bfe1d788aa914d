package agent

import (
	"encoding/json"
	"slices"
	"sort"
	"sync"

	"staage/tools"
)

// State is what the event stream adds up to: per lane, the conversation as
// the provider sees it, the plan, the desk page and the calls that started
// without a result. The live loop applies every event it publishes; resume
// applies the journal's events. Both paths use this one reducer.
type State struct {
	mu    sync.Mutex
	lanes map[string]*LaneState
}

// LaneState is one lane's share of the State.
type LaneState struct {
	Name    string
	History []Message
	Plan    []tools.PlanStep
	Desk    string
	// Started holds calls that began running and have no result yet.
	Started map[string]ToolStarted
	// Parent is set for a child lane; ChildStatus once it finished
	// ("done", "failed", "cut"), "" while it runs.
	Parent      string
	Mode        string
	ChildStatus string
}

// NewState returns an empty state.
func NewState() *State { return &State{lanes: map[string]*LaneState{}} }

func (s *State) lane(name string) *LaneState {
	l, ok := s.lanes[name]
	if !ok {
		l = &LaneState{Name: name, Started: map[string]ToolStarted{}}
		s.lanes[name] = l
	}
	return l
}

// Apply folds one event into the state.
func (s *State) Apply(e Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch e := e.(type) {
	case UserMessage:
		l := s.lane(e.Lane)
		l.History = append(l.History, Message{Role: RoleUser, Text: e.Text})
	case AssistantMessage:
		l := s.lane(e.Lane)
		m := e.Message
		m.Role = RoleAssistant
		l.History = append(l.History, m)
	case ToolStarted:
		s.lane(e.Lane).Started[e.ID] = e
	case ToolResult:
		l := s.lane(e.Lane)
		delete(l.Started, e.ID)
		part := ToolResultPart{CallID: e.ID, Name: e.Tool, Content: resultContent(e), IsError: !e.OK}
		if n := len(l.History); n > 0 && l.History[n-1].Role == RoleTool {
			l.History[n-1].ToolResults = append(l.History[n-1].ToolResults, part)
		} else {
			l.History = append(l.History, Message{Role: RoleTool, ToolResults: []ToolResultPart{part}})
		}
	case ChildStarted:
		l := s.lane(e.Child)
		l.Parent, l.Mode = e.Lane, e.Mode
	case ChildFinished:
		s.lane(e.Child).ChildStatus = e.Status
	case PlanChanged:
		s.lane(e.Lane).Plan = slices.Clone(e.Steps)
	case DeskChanged:
		s.lane(e.Lane).Desk = e.Page
	}
}

// resultContent is the text the model reads for a result: the wire JSON.
func resultContent(e ToolResult) string {
	w := tools.WireResult{OK: e.OK, Payload: e.Payload, Refusal: e.Refusal, Message: e.Message, Details: e.Details}
	b, err := json.Marshal(w)
	if err != nil {
		return `{"ok":false,"refusal":"tool.failed","message":"result could not be encoded"}`
	}
	return string(b)
}

// History returns a copy of a lane's conversation.
func (s *State) History(lane string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.lanes[lane]
	if !ok {
		return nil
	}
	return slices.Clone(l.History)
}

// Lane returns a copy of one lane's state.
func (s *State) Lane(name string) (LaneState, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.lanes[name]
	if !ok {
		return LaneState{}, false
	}
	c := *l
	c.History = slices.Clone(l.History)
	c.Plan = slices.Clone(l.Plan)
	c.Started = map[string]ToolStarted{}
	for k, v := range l.Started {
		c.Started[k] = v
	}
	return c, true
}

// Lanes lists lane names, sorted, "main" first.
func (s *State) Lanes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for n := range s.lanes {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if (names[i] == MainLane) != (names[j] == MainLane) {
			return names[i] == MainLane
		}
		return names[i] < names[j]
	})
	return names
}

// PendingCall is a tool call of a lane's last assistant message that has no
// result.
type PendingCall struct {
	Lane  string
	Order int
	Call  ToolCallPart
}

// Unanswered lists the tool calls a crash cut off: calls of each lane's last
// assistant message without a result. Resume answers them as interrupted;
// they are never re-run silently.
func (s *State) Unanswered() []PendingCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []PendingCall
	for name, l := range s.lanes {
		out = append(out, unansweredIn(name, l)...)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Lane != out[j].Lane {
			return out[i].Lane < out[j].Lane
		}
		return out[i].Order < out[j].Order
	})
	return out
}

func unansweredIn(lane string, l *LaneState) []PendingCall {
	for i := len(l.History) - 1; i >= 0; i-- {
		m := l.History[i]
		if m.Role == RoleUser {
			return nil
		}
		if m.Role != RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		answered := map[string]bool{}
		if i+1 < len(l.History) && l.History[i+1].Role == RoleTool {
			for _, r := range l.History[i+1].ToolResults {
				answered[r.CallID] = true
			}
		}
		var out []PendingCall
		for k, c := range m.ToolCalls {
			if !answered[c.ID] {
				out = append(out, PendingCall{Lane: lane, Order: k, Call: c})
			}
		}
		return out
	}
	return nil
}
