// Package approvals is the gate every tool call passes: the policy says
// whether a human is needed, standing grants bound to the descriptor digest
// answer for the human when they cover the call, and otherwise the Approver
// (the TUI modal, or the headless policy) is asked and the call blocks,
// cancellably, until it answers.
package approvals

import (
	"context"
	"encoding/json"

	"staage/tools"
)

// Scope says how far an approval reaches.
type Scope string

// Approval scopes. Auto and Never are never chosen by a human: Auto is a
// pre-granted effect class (--auto), Never a NEVER-policy tool.
const (
	ScopeOnce    Scope = "once"
	ScopeSession Scope = "session"
	ScopeAlways  Scope = "always"
	ScopeAuto    Scope = "auto"
	ScopeNever   Scope = "never"
)

// Verdict is the operator's answer.
type Verdict string

// The two verdicts.
const (
	Approve Verdict = "approved"
	Deny    Verdict = "denied"
)

// Request is one question put to the operator. Everything the modal shows is
// here, already decided by the tool: the descriptor, the canonical arguments
// that will run and a typed preview.
type Request struct {
	ID         string
	Lane       string
	Descriptor tools.Descriptor
	Args       json.RawMessage
	Preview    tools.Preview
	// Prefixes the tool proposes for a narrowed grant (bash: "go test").
	Prefixes []string
	// Sandbox is the containment the call would run under, in words.
	Sandbox string
}

// Decision is the operator's answer to a Request.
type Decision struct {
	Verdict Verdict
	// Scope of an approval: once, session or always. Ignored on deny.
	Scope Scope
	// Prefix narrows a session/always grant to calls the tool says match it.
	Prefix string
	// Note is read by the model (deny with a note, or approve with one).
	Note string
	// EditedArgs replaces the proposed arguments (the operator edited the
	// content in $EDITOR). They are validated again before they run, and the
	// model is told.
	EditedArgs json.RawMessage
}

// Approver asks a human. Approve blocks until the operator answers or ctx is
// done; on ctx it must return ctx.Err() promptly and leave nothing on screen
// that could answer a later request. Implementations may be called from
// several goroutines at once (lanes run concurrently) and must queue requests
// first in, first out: a newer request never replaces the one on screen.
type Approver interface {
	Approve(ctx context.Context, req Request) (Decision, error)
}

// ApproverFunc adapts a function to Approver.
type ApproverFunc func(ctx context.Context, req Request) (Decision, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, req Request) (Decision, error) { return f(ctx, req) }
