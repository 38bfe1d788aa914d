package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"staage/agent"
	"staage/agent/provider/wire"
)

// attempt maps one SSE response to stream events. Tool calls are keyed by
// the API's index; each gets our own sequential index, and all end together
// at [DONE] (the API has no per-call end marker). A stream cut before [DONE]
// never ends its calls.
type attempt struct {
	label    string
	dec      ssestream.Decoder
	queue    []agent.StreamEvent
	calls    map[int64]*call
	nextIdx  int
	open     []*call
	usage    agent.Usage
	hasUsage bool
	finish   string
	done     bool // [DONE] seen
	ended    bool
}

type call struct {
	idx int
	id  string
}

func newAttempt(label string, dec ssestream.Decoder) *attempt {
	return &attempt{label: label, dec: dec, calls: map[int64]*call{}}
}

func (a *attempt) Next() (agent.StreamEvent, error) {
	for len(a.queue) == 0 {
		if a.ended {
			return agent.StreamEvent{}, io.EOF
		}
		if a.done {
			a.end()
			continue
		}
		if a.dec == nil || !a.dec.Next() {
			if a.dec != nil && a.dec.Err() != nil {
				return agent.StreamEvent{}, a.dec.Err()
			}
			return agent.StreamEvent{}, &wire.Fault{Provider: a.label, Kind: wire.FaultCut,
				Message: "the response ended without [DONE]", Retryable: true}
		}
		if err := a.handle(a.dec.Event()); err != nil {
			return agent.StreamEvent{}, err
		}
	}
	ev := a.queue[0]
	a.queue = a.queue[1:]
	return ev, nil
}

func (a *attempt) emit(ev agent.StreamEvent) { a.queue = append(a.queue, ev) }

func (a *attempt) handle(e ssestream.Event) error {
	data := bytes.TrimSpace(e.Data)
	if len(data) == 0 {
		return nil
	}
	if bytes.Equal(data, []byte("[DONE]")) {
		a.done = true
		return nil
	}
	if bytes.Contains(data, []byte(`"error"`)) {
		// {"error": {...}} (OpenAI, OpenRouter, llama.cpp), or a bare
		// {"object": "error", ...} (older vLLM).
		var probe struct {
			Error  *streamError `json:"error"`
			Object string       `json:"object"`
			streamError
		}
		if err := json.Unmarshal(data, &probe); err != nil {
			return &wire.Fault{Provider: a.label, Kind: wire.FaultDecode, Message: err.Error(), Err: err}
		}
		if probe.Error != nil {
			return probe.Error.fault(a.label)
		}
		if probe.Object == "error" {
			return probe.streamError.fault(a.label)
		}
	}
	var c sdk.ChatCompletionChunk
	if err := json.Unmarshal(data, &c); err != nil {
		return &wire.Fault{Provider: a.label, Kind: wire.FaultDecode, Message: err.Error(), Err: err}
	}
	if c.JSON.Usage.Valid() && c.Usage.JSON.PromptTokens.Valid() {
		cached := c.Usage.PromptTokensDetails.CachedTokens
		// prompt_tokens includes the cached ones; ours counts them apart,
		// as Anthropic does, so one price table serves both.
		a.usage = agent.Usage{InputTokens: c.Usage.PromptTokens - cached, OutputTokens: c.Usage.CompletionTokens, CacheReadTokens: cached}
		a.hasUsage = true
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // we ask for one choice
		}
		d := ch.Delta
		if r := reasoning(d); r != "" {
			a.emit(agent.StreamEvent{Kind: agent.StreamThinking, Text: r})
		}
		if d.Content != "" {
			a.emit(agent.StreamEvent{Kind: agent.StreamText, Text: d.Content})
		}
		if d.Refusal != "" {
			a.emit(agent.StreamEvent{Kind: agent.StreamText, Text: d.Refusal})
		}
		for _, tc := range d.ToolCalls {
			cl := a.calls[tc.Index]
			if cl == nil || (tc.ID != "" && cl.id != tc.ID) {
				// A new call; some servers reuse index 0 for every call
				// and tell them apart only by id.
				id := tc.ID
				if id == "" {
					id = fmt.Sprintf("call_%d", a.nextIdx)
				}
				cl = &call{idx: a.nextIdx, id: id}
				a.nextIdx++
				a.calls[tc.Index] = cl
				a.open = append(a.open, cl)
				a.emit(agent.StreamEvent{Kind: agent.StreamToolStart, Index: cl.idx, ID: cl.id, Name: tc.Function.Name})
			}
			if tc.Function.Arguments != "" {
				a.emit(agent.StreamEvent{Kind: agent.StreamToolDelta, Index: cl.idx, ArgsDelta: tc.Function.Arguments})
			}
		}
		if ch.FinishReason != "" {
			// Calls end at [DONE], not here: a stream cut between the two
			// must leave them open so that none of them runs.
			a.finish = ch.FinishReason
		}
	}
	return nil
}

// closeCalls ends every open call: the response is whole.
func (a *attempt) closeCalls() {
	for _, cl := range a.open {
		a.emit(agent.StreamEvent{Kind: agent.StreamToolEnd, Index: cl.idx})
	}
	a.open = nil
	a.calls = map[int64]*call{}
}

// end closes a complete response: usage, then the stop reason.
func (a *attempt) end() {
	a.ended = true
	if a.finish == "" {
		// [DONE] without a finish_reason: the server skipped it, but the
		// response is whole by the protocol's own marker.
		a.finish = "stop"
	}
	if a.finish != "length" {
		a.closeCalls()
	} // else the token limit may have cut the last call's arguments: a
	// partial call must never look finished, so none is ended.
	if a.hasUsage {
		a.emit(agent.StreamEvent{Kind: agent.StreamUsage, Usage: a.usage})
	}
	a.emit(agent.StreamEvent{Kind: agent.StreamStop, StopReason: stopReason(a.finish, a.nextIdx > 0)})
}

// stopReason speaks the loop's words. A response that made calls stops for
// tool use whatever the server said (some local servers say "stop").
func stopReason(finish string, madeCalls bool) string {
	if madeCalls && (finish == "stop" || finish == "tool_calls" || finish == "function_call") {
		return "tool_use"
	}
	switch finish {
	case "stop":
		return "end_turn"
	case "tool_calls", "function_call":
		return "tool_use"
	case "length":
		return "max_tokens"
	case "content_filter":
		return "refusal"
	}
	return finish
}

// reasoning is the thinking text some servers stream beside the content
// (reasoning_content: DeepSeek, vLLM, llama.cpp; reasoning: Ollama,
// OpenRouter).
func reasoning(d sdk.ChatCompletionChunkChoiceDelta) string {
	for _, k := range []string{"reasoning_content", "reasoning"} {
		f, ok := d.JSON.ExtraFields[k]
		if !ok { // extra fields are never "valid": they match no declared type
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

func (a *attempt) Close() error {
	if a.dec == nil {
		return nil
	}
	return a.dec.Close()
}
