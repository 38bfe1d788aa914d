// Package arch holds no code: its test reads every package's imports and
// fails when an arrow of the design is broken, so the layering
// cmd/staage → ui → agent → approvals → tools ← tools/<family> cannot drift
// silently. A second test keeps shipped files from naming any host that is not
// a public service, loopback or a reserved example name.
package arch
