// Package modal is the approval dialog: a FIFO queue of pending approval
// requests, the one at the head drawn over the dimmed console with its
// minted name, "1 of N", origin, effect badge, digest, decoded arguments and
// a preview rendered by type (a diff, a command, the arguments). It has no
// default answer, discards keys typed before it opened or within a quiet
// grace period after, and a newer request never replaces the one on screen.
package modal

import (
	"time"

	"staage/approvals"
)

// Grace is the quiet period after a request reaches the screen during
// which keys are discarded: a key typed for something else must not answer
// a question the operator has not read. Every discarded key restarts it.
const Grace = 400 * time.Millisecond

// Request is one approval waiting for the operator. Answer receives the
// decision exactly once; it is buffered so the console never blocks on it.
type Request struct {
	// Key identifies the request within the console (the bridge numbers
	// them); the tool call ID alone is not unique across lanes.
	Key    uint64
	Req    approvals.Request
	Answer chan<- approvals.Decision
}

// OpenMsg queues a request.
type OpenMsg struct{ Request Request }

// CancelMsg withdraws a request whose caller gave up (its turn was
// interrupted): it leaves the queue and can no longer be answered.
type CancelMsg struct{ Key uint64 }

// AnsweredMsg reports a decision the modal handed back (for the status
// line and tests).
type AnsweredMsg struct {
	Key      uint64
	Decision approvals.Decision
}
