package agent

import (
	"bytes"
	"encoding/json"
	"fmt"

	"staage/tools"
)

// Event is one item of the single stream the loop publishes. The TUI, the
// journal and headless `staage exec --json` all read this stream and nothing
// else; resuming a session is replaying it through the same reducers.
type Event interface {
	// Type is the event's name on the wire ("text", "tool_call", ...).
	Type() string
}

// Sink receives events. Publish is called synchronously from the loop, in
// order; a sink that must not lose a decision (the journal) makes it durable
// before it returns, so the loop goes on only after that.
type Sink interface {
	Publish(e Event)
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(Event)

// Publish calls f.
func (f SinkFunc) Publish(e Event) { f(e) }

// Fanout publishes to each sink in order.
type Fanout []Sink

// Publish sends e to every sink.
func (f Fanout) Publish(e Event) {
	for _, s := range f {
		if s != nil {
			s.Publish(e)
		}
	}
}

// UserMessage is a prompt the operator sent to a lane.
type UserMessage struct {
	Lane string `json:"lane"`
	Text string `json:"text"`
}

// TextDelta is a piece of assistant text as it streams.
type TextDelta struct {
	Lane string `json:"lane"`
	Text string `json:"text"`
}

// ThinkingDelta is a piece of extended thinking as it streams.
type ThinkingDelta struct {
	Lane string `json:"lane"`
	Text string `json:"text"`
}

// AssistantMessage closes one model response: the whole message as it
// enters the conversation (resume rebuilds history from these).
type AssistantMessage struct {
	Lane    string  `json:"lane"`
	Message Message `json:"message"`
	Stop    string  `json:"stop"`
}

// ToolCall is a call the model made, after the host bound it to a tool.
// Input is the canonical validated arguments, or the raw text when they did
// not validate (then a refusal follows).
type ToolCall struct {
	Lane   string               `json:"lane"`
	ID     string               `json:"id"`
	Tool   string               `json:"tool"`
	Origin string               `json:"origin,omitempty"`
	Policy tools.ApprovalPolicy `json:"policy,omitempty"`
	Effect tools.EffectClass    `json:"effect,omitempty"`
	Digest string               `json:"digest,omitempty"`
	Input  json.RawMessage      `json:"input"`
}

// ApprovalAsked says a human is being asked about a call.
type ApprovalAsked struct {
	Lane    string        `json:"lane"`
	ID      string        `json:"id"`
	Tool    string        `json:"tool"`
	Preview tools.Preview `json:"-"`
}

// ApprovalDecided records a gate decision.
type ApprovalDecided struct {
	Lane     string `json:"lane"`
	ID       string `json:"id"`
	Tool     string `json:"tool,omitempty"`
	Digest   string `json:"digest,omitempty"`
	Decision string `json:"decision"` // "approved" | "denied"
	Scope    string `json:"scope"`    // "once" | "session" | "always" | "auto" | "never" | "prefix" ...
	Prefix   string `json:"prefix,omitempty"`
	Note     string `json:"note,omitempty"`
	// Asked says the operator answered; false when a policy, a standing
	// grant or a refused preview decided without asking.
	Asked bool `json:"asked"`
	// Edited is set when the operator changed the proposed content before
	// approving; Input is then what runs.
	Edited bool            `json:"edited,omitempty"`
	Input  json.RawMessage `json:"input,omitempty"`
}

// ToolStarted says a handler began running (journaled durably, so a crash
// mid-run is seen on resume as interrupted, never re-run).
type ToolStarted struct {
	Lane string `json:"lane"`
	ID   string `json:"id"`
	Tool string `json:"tool"`
}

// ToolResult is a call's answer.
type ToolResult struct {
	Lane    string            `json:"lane"`
	ID      string            `json:"id"`
	Tool    string            `json:"tool,omitempty"`
	OK      bool              `json:"ok"`
	Payload json.RawMessage   `json:"payload,omitempty"`
	Refusal tools.RefusalName `json:"refusal,omitempty"`
	Message string            `json:"message,omitempty"`
	Details map[string]any    `json:"details,omitempty"`
}

// PlanChanged carries the lane's whole plan after a change.
type PlanChanged struct {
	Lane  string           `json:"lane"`
	Steps []tools.PlanStep `json:"steps"`
}

// DeskChanged carries the lane's whole desk page after a write.
type DeskChanged struct {
	Lane string `json:"lane"`
	Page string `json:"page"`
}

// ChildStarted says a child thread began in its own lane.
type ChildStarted struct {
	Lane      string `json:"lane"`  // the parent's lane
	Child     string `json:"child"` // the child's lane
	Mode      string `json:"mode"`  // "scout" | "write"
	Objective string `json:"objective"`
	Worktree  string `json:"worktree,omitempty"`
}

// ChildFinished carries the child's envelope.
type ChildFinished struct {
	Lane     string          `json:"lane"`
	Child    string          `json:"child"`
	Status   string          `json:"status"` // "done" | "failed" | "cut"
	Envelope json.RawMessage `json:"envelope"`
}

// UsageReport counts tokens (and cost when prices are known) of one response.
type UsageReport struct {
	Lane    string  `json:"lane"`
	Usage   Usage   `json:"usage"`
	CostUSD float64 `json:"costUSD,omitempty"`
}

// TurnDone closes a turn. Stop is "end_turn", "max_steps", "interrupted",
// "incomplete", "error", "max_tokens".
type TurnDone struct {
	Lane string `json:"lane"`
	Stop string `json:"stop"`
}

// Error is a fault the operator must see: a dead provider, a cut stream, a
// failed journal write. The loop reports it and does not crash.
type Error struct {
	Lane    string `json:"lane"`
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// Warning is a recovered fault or a notice (a retry, a skipped event).
type Warning struct {
	Lane    string `json:"lane"`
	Message string `json:"message"`
}

// Type implementations: the wire names.
func (UserMessage) Type() string      { return "user" }
func (TextDelta) Type() string        { return "text" }
func (ThinkingDelta) Type() string    { return "thinking" }
func (AssistantMessage) Type() string { return "message" }
func (ToolCall) Type() string         { return "tool_call" }
func (ApprovalAsked) Type() string    { return "approval_asked" }
func (ApprovalDecided) Type() string  { return "approval" }
func (ToolStarted) Type() string      { return "tool_started" }
func (ToolResult) Type() string       { return "tool_result" }
func (PlanChanged) Type() string      { return "plan" }
func (DeskChanged) Type() string      { return "desk" }
func (ChildStarted) Type() string     { return "child_started" }
func (ChildFinished) Type() string    { return "child_finished" }
func (UsageReport) Type() string      { return "usage" }
func (TurnDone) Type() string         { return "turn_done" }
func (Error) Type() string            { return "error" }
func (Warning) Type() string          { return "warning" }

// EncodeEvent renders an event as one JSON object with its "type" first.
func EncodeEvent(e Event) ([]byte, error) {
	body, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", e.Type(), err)
	}
	typ, _ := json.Marshal(e.Type())
	out := make([]byte, 0, len(body)+len(typ)+10)
	out = append(out, `{"type":`...)
	out = append(out, typ...)
	if len(body) > 2 {
		out = append(out, ',')
		out = append(out, body[1:]...)
	} else {
		out = append(out, '}')
	}
	return out, nil
}

// ErrUnknownEvent is returned by DecodeEvent for a type this version does
// not know (written by a newer staage).
type ErrUnknownEvent struct{ Type string }

func (e ErrUnknownEvent) Error() string { return fmt.Sprintf("unknown event type %q", e.Type) }

// DecodeEvent parses one encoded event.
func DecodeEvent(line []byte) (Event, error) {
	// EncodeEvent writes the type first; reading it from there saves a
	// second parse of every line on resume.
	if typ, ok := leadingType(line); ok {
		return decodeTyped(typ, line)
	}
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return nil, fmt.Errorf("decode event: %w", err)
	}
	return decodeTyped(head.Type, line)
}

// leadingType reads `{"type":"name"` at the start of line, for names made
// of plain characters only.
func leadingType(line []byte) (string, bool) {
	const prefix = `{"type":"`
	if !bytes.HasPrefix(line, []byte(prefix)) {
		return "", false
	}
	rest := line[len(prefix):]
	for i, c := range rest {
		switch {
		case c == '"':
			return string(rest[:i]), i > 0
		case c == '_' || c >= 'a' && c <= 'z':
		default:
			return "", false
		}
	}
	return "", false
}

func decodeTyped(typ string, line []byte) (Event, error) {
	var (
		e   Event
		err error
	)
	switch typ {
	case "user":
		e, err = unmarshal[UserMessage](line)
	case "text":
		e, err = unmarshal[TextDelta](line)
	case "thinking":
		e, err = unmarshal[ThinkingDelta](line)
	case "message":
		e, err = unmarshal[AssistantMessage](line)
	case "tool_call":
		e, err = unmarshal[ToolCall](line)
	case "approval_asked":
		e, err = unmarshal[ApprovalAsked](line)
	case "approval":
		e, err = unmarshal[ApprovalDecided](line)
	case "tool_started":
		e, err = unmarshal[ToolStarted](line)
	case "tool_result":
		e, err = unmarshal[ToolResult](line)
	case "plan":
		e, err = unmarshal[PlanChanged](line)
	case "desk":
		e, err = unmarshal[DeskChanged](line)
	case "child_started":
		e, err = unmarshal[ChildStarted](line)
	case "child_finished":
		e, err = unmarshal[ChildFinished](line)
	case "usage":
		e, err = unmarshal[UsageReport](line)
	case "turn_done":
		e, err = unmarshal[TurnDone](line)
	case "error":
		e, err = unmarshal[Error](line)
	case "warning":
		e, err = unmarshal[Warning](line)
	default:
		return nil, ErrUnknownEvent{Type: typ}
	}
	if err != nil {
		return nil, fmt.Errorf("decode %s event: %w", typ, err)
	}
	return e, nil
}

func unmarshal[T Event](line []byte) (Event, error) {
	var v T
	if err := json.Unmarshal(line, &v); err != nil {
		return nil, err
	}
	return v, nil
}
