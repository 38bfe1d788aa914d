// Package wire holds what every network provider shares: the retry policy
// (backoff with jitter, retry-after in seconds or as an HTTP date, capped),
// the idle-stream guard (a transport that cuts a response whose bytes stop
// arriving), the typed Fault every failure becomes, and the retrying stream
// driver that turns one provider attempt at a time into an agent.Stream.
//
// The rule the driver enforces: an attempt that already handed an event to
// the loop is never retried, because the operator has seen it. A failure
// after output is a cut stream: Next returns the Fault, the loop marks the
// turn incomplete and runs no partial tool call.
package wire
