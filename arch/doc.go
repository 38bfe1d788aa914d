// Package arch holds no code: its test reads every package's imports and
// fails when an arrow of the design is broken, so the layering
// cmd/staage → ui → agent → approvals → tools ← tools/<family> cannot drift
// silently.
package arch
