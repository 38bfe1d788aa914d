package anthropic

import (
	"io"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"

	"staage/agent"
	"staage/agent/provider/wire"
)

// attempt maps one SSE response to stream events. One API event can yield
// several of ours (a tool block's stop, usage then stop), so they queue.
type attempt struct {
	s       *ssestream.Stream[sdk.MessageStreamEventUnion]
	emitted bool // events have been handed out
	started bool // message_start seen: usage is known
	queue   []agent.StreamEvent
	blocks  map[int64]*block
	usage   agent.Usage
	stop    string
	stopped bool // message_stop seen: the response is whole
	done    bool
	failed  error // returned after the usage of a cut response
	// pendingEnd holds the end of the latest tool block until the next
	// block starts or the stop reason is known: a response stopped by
	// max_tokens may have cut that block's arguments, and a partial call
	// must never look finished.
	pendingEnd *int
}

type block struct {
	kind    string // "text", "thinking", "tool_use", ...
	gotArgs bool
}

func newAttempt(s *ssestream.Stream[sdk.MessageStreamEventUnion]) *attempt {
	return &attempt{s: s, blocks: map[int64]*block{}}
}

func (a *attempt) Next() (agent.StreamEvent, error) {
	for len(a.queue) == 0 {
		if a.done {
			return agent.StreamEvent{}, io.EOF
		}
		if a.failed != nil {
			return agent.StreamEvent{}, a.failed
		}
		if !a.s.Next() {
			err := a.s.Err()
			if err == nil && !a.stopped {
				err = &wire.Fault{Provider: "anthropic", Kind: wire.FaultCut,
					Message: "the response ended without message_stop", Retryable: true}
			}
			if err != nil {
				// A response cut after it began was still billed for its
				// input: report the usage known so far, then the fault.
				if a.emitted && a.started {
					a.failed = err
					a.emit(agent.StreamEvent{Kind: agent.StreamUsage, Usage: a.usage})
					continue
				}
				return agent.StreamEvent{}, err
			}
			a.done = true
			continue
		}
		a.handle(a.s.Current())
	}
	ev := a.queue[0]
	a.queue = a.queue[1:]
	a.emitted = true
	return ev, nil
}

func (a *attempt) emit(ev agent.StreamEvent) { a.queue = append(a.queue, ev) }

func (a *attempt) handle(e sdk.MessageStreamEventUnion) {
	switch e.Type {
	case "message_start":
		a.started = true
		u := e.Message.Usage
		a.usage = agent.Usage{
			InputTokens:      u.InputTokens,
			OutputTokens:     u.OutputTokens,
			CacheReadTokens:  u.CacheReadInputTokens,
			CacheWriteTokens: u.CacheCreationInputTokens,
		}
	case "content_block_start":
		a.flushEnd()
		cb := e.ContentBlock
		b := &block{kind: cb.Type}
		a.blocks[e.Index] = b
		switch cb.Type {
		case "text":
			if cb.Text != "" {
				a.emit(agent.StreamEvent{Kind: agent.StreamText, Text: cb.Text})
			}
		case "thinking":
			if cb.Thinking != "" {
				a.emit(agent.StreamEvent{Kind: agent.StreamThinking, Text: cb.Thinking})
			}
		case "redacted_thinking":
			a.emit(agent.StreamEvent{Kind: agent.StreamThinking, Signature: redactedPrefix + cb.Data})
		case "tool_use":
			a.emit(agent.StreamEvent{Kind: agent.StreamToolStart, Index: int(e.Index), ID: cb.ID, Name: cb.Name})
		}
	case "content_block_delta":
		b := a.blocks[e.Index]
		d := e.Delta
		switch d.Type {
		case "text_delta":
			if d.Text != "" {
				a.emit(agent.StreamEvent{Kind: agent.StreamText, Text: d.Text})
			}
		case "thinking_delta":
			if d.Thinking != "" {
				a.emit(agent.StreamEvent{Kind: agent.StreamThinking, Text: d.Thinking})
			}
		case "signature_delta":
			a.emit(agent.StreamEvent{Kind: agent.StreamThinking, Signature: d.Signature})
		case "input_json_delta":
			if b != nil && b.kind == "tool_use" && d.PartialJSON != "" {
				b.gotArgs = true
				a.emit(agent.StreamEvent{Kind: agent.StreamToolDelta, Index: int(e.Index), ArgsDelta: d.PartialJSON})
			}
		}
	case "content_block_stop":
		if b := a.blocks[e.Index]; b != nil && b.kind == "tool_use" {
			if !b.gotArgs {
				// A call without arguments streams no input_json_delta.
				a.emit(agent.StreamEvent{Kind: agent.StreamToolDelta, Index: int(e.Index), ArgsDelta: "{}"})
			}
			a.flushEnd()
			idx := int(e.Index)
			a.pendingEnd = &idx
		}
	case "message_delta":
		if e.Delta.StopReason != "" {
			a.stop = string(e.Delta.StopReason)
		}
		if a.stop == string(sdk.StopReasonMaxTokens) {
			a.pendingEnd = nil // cut by the token limit: left open
		}
		a.flushEnd()
		// message_delta usage is cumulative; a field it leaves out keeps
		// the value message_start gave.
		u := e.Usage
		if u.JSON.OutputTokens.Valid() {
			a.usage.OutputTokens = u.OutputTokens
		}
		if u.JSON.InputTokens.Valid() && u.InputTokens > 0 {
			a.usage.InputTokens = u.InputTokens
		}
		if u.JSON.CacheReadInputTokens.Valid() && u.CacheReadInputTokens > 0 {
			a.usage.CacheReadTokens = u.CacheReadInputTokens
		}
		if u.JSON.CacheCreationInputTokens.Valid() && u.CacheCreationInputTokens > 0 {
			a.usage.CacheWriteTokens = u.CacheCreationInputTokens
		}
	case "message_stop":
		if a.stop != string(sdk.StopReasonMaxTokens) {
			a.flushEnd()
		}
		a.stopped = true
		stop := a.stop
		if stop == "" {
			stop = "end_turn"
		}
		a.emit(agent.StreamEvent{Kind: agent.StreamUsage, Usage: a.usage})
		a.emit(agent.StreamEvent{Kind: agent.StreamStop, StopReason: stop})
	}
}

// flushEnd ends the held tool block.
func (a *attempt) flushEnd() {
	if a.pendingEnd != nil {
		a.emit(agent.StreamEvent{Kind: agent.StreamToolEnd, Index: *a.pendingEnd})
		a.pendingEnd = nil
	}
}

func (a *attempt) Close() error { return a.s.Close() }
