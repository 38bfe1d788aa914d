// Package journal keeps a session on disk: every event of the agent's one
// stream is appended as a JSON line to a per-session file, decisions and
// results are fsynced before the loop goes on, and a session is resumed by
// reading the file back (tolerating a torn or garbage tail) and replaying
// its events through the same reducers the live console uses.
//
// The format, the fsync policy, locking and resume semantics are described
// in docs/sessions.md.
package journal
