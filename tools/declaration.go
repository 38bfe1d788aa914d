package tools

import (
	"context"
	"encoding/json"
)

// BuiltinOrigin is the origin of the tools staage ships. Only this origin
// keeps its raw names; every other origin is prefixed (origin__raw).
const BuiltinOrigin = "builtin"

// ApprovalPolicy answers "does this call need a human at all?".
type ApprovalPolicy string

// The two approval policies of the spec.
const (
	Required ApprovalPolicy = "required"
	Never    ApprovalPolicy = "never"
)

// EffectClass answers "how much effect does the approved call have?".
type EffectClass string

// The four effect classes, weakest first.
const (
	EffectRead            EffectClass = "read"
	EffectIdempotentWrite EffectClass = "idempotent-write"
	EffectReversible      EffectClass = "reversible"
	EffectIrreversible    EffectClass = "irreversible"
)

// EffectClasses lists every valid effect class, weakest first.
func EffectClasses() []EffectClass {
	return []EffectClass{EffectRead, EffectIdempotentWrite, EffectReversible, EffectIrreversible}
}

// Valid reports whether e is one of the four declared classes.
func (e EffectClass) Valid() bool {
	switch e {
	case EffectRead, EffectIdempotentWrite, EffectReversible, EffectIrreversible:
		return true
	}
	return false
}

// ParseEffectClass parses one class name as an operator writes it.
func ParseEffectClass(s string) (EffectClass, bool) {
	e := EffectClass(s)
	return e, e.Valid()
}

// Declaration is what a tool family hands the registry. The host mints the
// name from Origin and RawName; nothing supplied by a model or a server names
// a tool directly.
type Declaration struct {
	Origin      string
	RawName     string
	Description string
	// Schema is the JSON Schema of the arguments object. Families declare
	// additionalProperties:false so that every key a call carries is one the
	// handler reads.
	Schema  json.RawMessage
	Policy  ApprovalPolicy
	Effect  EffectClass
	Handler Handler
}

// Handler runs one validated call. It never panics on bad input: what it
// cannot do it answers with a Refusal.
type Handler interface {
	Run(ctx context.Context, call Call) Result
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, call Call) Result

// Run calls f.
func (f HandlerFunc) Run(ctx context.Context, call Call) Result { return f(ctx, call) }

// Previewer is implemented by handlers of REQUIRED tools that can show the
// exact effect of a call before it runs (a diff, a command). The approval
// modal renders the preview by its type, never by the tool's name.
type Previewer interface {
	Preview(ctx context.Context, call Call) (Preview, error)
}

// PrefixGranter is implemented by handlers whose approvals may be narrowed to
// a prefix of the call (bash: "go test"). The gate asks the tool, so the gate
// never learns any tool's argument shape.
type PrefixGranter interface {
	// PrefixCandidates proposes prefixes the operator may grant for this
	// call, shortest first; none when the call cannot be prefix-granted.
	PrefixCandidates(call Call) []string
	// MatchesPrefix reports whether the call is covered by a grant for
	// prefix. It must answer false for anything it cannot fully understand.
	MatchesPrefix(call Call, prefix string) bool
}

// Call is one invocation after its arguments were decoded once, checked for
// duplicate and case-variant keys and validated against the schema.
type Call struct {
	ID   string
	Lane string
	// Args is the canonical JSON of the validated arguments object (sorted
	// keys, no insignificant space). It is what the approval shows and what
	// the handler decodes: the two cannot differ.
	Args json.RawMessage
}

// Decode unmarshals the call's canonical arguments into v.
func (c Call) Decode(v any) error {
	return json.Unmarshal(c.Args, v)
}
