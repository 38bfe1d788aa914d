package main

import (
	"testing"

	"staage/agent"
)

// Lines an MCP server causes after boot reach the screen once a sink is
// attached; before that they are in the boot report only, not lost in a
// nil sink.
func TestLateNoticesReachTheScreenOnceAttached(t *testing.T) {
	var got []agent.Event
	n := &lateNotices{}
	n.say("before attach")
	n.attach(agent.SinkFunc(func(e agent.Event) { got = append(got, e) }))
	n.say("notes: the server exited")
	if len(got) != 1 {
		t.Fatalf("events %v", got)
	}
	w, ok := got[0].(agent.Warning)
	if !ok || w.Lane != agent.MainLane || w.Message != "notes: the server exited" {
		t.Fatalf("event %#v", got[0])
	}
}
