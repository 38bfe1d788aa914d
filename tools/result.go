package tools

import "encoding/json"

// Result is the sealed answer of a tool: Ok or Refusal, nothing else.
type Result interface {
	sealedResult()
}

// Ok carries a successful call's payload. Payloads are JSON-encodable values
// whose bounds are named fields (see Bounds).
type Ok struct {
	Payload any
	// Notices report changes to the console's own state (plan, desk).
	Notices []Notice
}

// Refusal is a typed, named reading: a reason the call did not do what was
// asked. It is returned to the model; the loop keeps going.
type Refusal struct {
	Name    RefusalName
	Message string
	Details map[string]any
}

func (Ok) sealedResult()       {}
func (*Refusal) sealedResult() {}

// Error lets a *Refusal travel as an error inside a family's code.
func (r *Refusal) Error() string { return string(r.Name) + ": " + r.Message }

// Refuse builds a refusal.
func Refuse(name RefusalName, message string) *Refusal {
	return &Refusal{Name: name, Message: message}
}

// With adds one detail and returns r for chaining.
func (r *Refusal) With(key string, value any) *Refusal {
	if r.Details == nil {
		r.Details = map[string]any{}
	}
	r.Details[key] = value
	return r
}

// Bounds names every way a tool may have shortened its answer. Payloads embed
// it; a tool that clips and does not say so here is a bug.
type Bounds struct {
	Truncated     bool   `json:"truncated,omitempty"`
	NextCursor    string `json:"nextCursor,omitempty"`
	ScanCapped    bool   `json:"scanCapped,omitempty"`
	SkippedBinary int    `json:"skippedBinary,omitempty"`
	SkippedLarge  int    `json:"skippedLarge,omitempty"`
	ClippedLines  int    `json:"clippedLines,omitempty"`
}

// WireResult is the JSON shape a result takes for the model, the journal and
// headless output.
type WireResult struct {
	OK      bool            `json:"ok"`
	Payload json.RawMessage `json:"payload,omitempty"`
	Refusal RefusalName     `json:"refusal,omitempty"`
	Message string          `json:"message,omitempty"`
	Details map[string]any  `json:"details,omitempty"`
}

// ToWire converts a result to its wire shape. A payload that cannot be
// encoded becomes a refusal rather than a silent empty answer.
func ToWire(r Result) WireResult {
	// *Ok is a Result too (a pointer's method set includes the value's); a
	// handler that returns &Ok{...} succeeded and must not read as "no result".
	if p, ok := r.(*Ok); ok && p != nil {
		r = *p
	}
	switch v := r.(type) {
	case Ok:
		b, err := json.Marshal(v.Payload)
		if err != nil {
			return WireResult{Refusal: ToolFailed, Message: "payload could not be encoded: " + err.Error()}
		}
		return WireResult{OK: true, Payload: b}
	case *Refusal:
		if v == nil {
			return WireResult{Refusal: ToolFailed, Message: "nil refusal"}
		}
		return WireResult{Refusal: v.Name, Message: v.Message, Details: v.Details}
	default:
		return WireResult{Refusal: ToolFailed, Message: "no result"}
	}
}

// FromWire turns a wire result back into a Result (used on resume).
func FromWire(w WireResult) Result {
	if w.OK {
		return Ok{Payload: w.Payload}
	}
	return &Refusal{Name: w.Refusal, Message: w.Message, Details: w.Details}
}
