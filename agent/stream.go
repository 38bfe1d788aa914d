package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// response is what one provider stream added up to.
type response struct {
	calls  []ToolCallPart
	reason string // the provider's stop reason
	// stop is set when the turn must end here (cut, interrupted, error).
	stop string
}

type pendingCall struct {
	index int
	id    string
	name  string
	args  strings.Builder
	ended bool
}

// stream calls the provider once and publishes what it says. A response cut
// before its end keeps its text but runs none of its calls: a partial call
// is never run.
func (s *Session) stream(ctx context.Context, lane string, req Request) response {
	st, err := s.cfg.Provider.Stream(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return response{stop: StopInterrupted}
		}
		s.publish(Error{Lane: lane, Kind: "provider", Message: fmt.Sprintf("%s: %v", s.ProviderName(), err)})
		return response{stop: StopError}
	}
	defer st.Close()

	var (
		text     strings.Builder
		thinking []ThinkingBlock
		think    strings.Builder
		calls    = map[int]*pendingCall{}
		reason   string
		sawStop  bool
	)
	flushThinking := func(sig string) {
		if think.Len() > 0 || sig != "" {
			thinking = append(thinking, ThinkingBlock{Text: think.String(), Signature: sig})
			think.Reset()
		}
	}
	for {
		ev, err := st.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			flushThinking("")
			s.finishMessage(lane, text.String(), nil, nil, StopIncomplete)
			if ctx.Err() != nil || errors.Is(err, context.Canceled) {
				return response{stop: StopInterrupted}
			}
			s.publish(streamFault(lane, s.ProviderName(), err))
			return response{stop: StopIncomplete}
		}
		switch ev.Kind {
		case StreamText:
			if ev.Text != "" {
				text.WriteString(ev.Text)
				s.publish(TextDelta{Lane: lane, Text: ev.Text})
			}
		case StreamThinking:
			if ev.Text != "" {
				think.WriteString(ev.Text)
				s.publish(ThinkingDelta{Lane: lane, Text: ev.Text})
			}
			if ev.Signature != "" {
				flushThinking(ev.Signature)
			}
		case StreamToolStart:
			calls[ev.Index] = &pendingCall{index: ev.Index, id: ev.ID, name: ev.Name}
		case StreamToolDelta:
			if c, ok := calls[ev.Index]; ok {
				c.args.WriteString(ev.ArgsDelta)
			}
		case StreamToolEnd:
			if c, ok := calls[ev.Index]; ok {
				c.ended = true
			}
		case StreamUsage:
			u := UsageReport{Lane: lane, Usage: ev.Usage}
			if s.cfg.Cost != nil {
				u.CostUSD = s.cfg.Cost(ev.Usage)
			}
			s.publish(u)
		case StreamWarning:
			s.publish(Warning{Lane: lane, Message: ev.Message})
		case StreamStop:
			reason, sawStop = ev.StopReason, true
		}
	}
	flushThinking("")
	ordered := make([]*pendingCall, 0, len(calls))
	for _, c := range calls {
		ordered = append(ordered, c)
	}
	sort.Slice(ordered, func(i, j int) bool { return ordered[i].index < ordered[j].index })
	var parts []ToolCallPart
	for _, c := range ordered {
		if !c.ended || c.id == "" || c.name == "" {
			// The stream ended without closing this call: it is partial.
			s.finishMessage(lane, text.String(), thinking, nil, StopIncomplete)
			s.publish(Error{Lane: lane, Kind: "stream", Message: fmt.Sprintf(
				"%s ended its response inside a tool call (%q); the turn is incomplete and none of its tool calls ran", s.ProviderName(), c.name)})
			return response{stop: StopIncomplete}
		}
		args := c.args.String()
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		parts = append(parts, ToolCallPart{ID: c.id, Name: c.name, Input: []byte(args)})
	}
	if !sawStop {
		s.finishMessage(lane, text.String(), thinking, nil, StopIncomplete)
		s.publish(Error{Lane: lane, Kind: "stream", Message: fmt.Sprintf(
			"the response from %s ended without its final event; the turn is incomplete and none of its tool calls ran", s.ProviderName())})
		return response{stop: StopIncomplete}
	}
	s.finishMessage(lane, text.String(), thinking, parts, reason)
	return response{calls: parts, reason: reason}
}

// finishMessage publishes the assistant message as it enters the
// conversation. An empty message (nothing said, no calls) is not recorded.
func (s *Session) finishMessage(lane, text string, thinking []ThinkingBlock, calls []ToolCallPart, stop string) {
	if text == "" && len(calls) == 0 && len(thinking) == 0 {
		return
	}
	s.publish(AssistantMessage{Lane: lane, Stop: stop, Message: Message{
		Role: RoleAssistant, Text: text, Thinking: thinking, ToolCalls: calls}})
}

// streamFault words a failed stream for the operator. Providers may classify
// their errors (FaultKind: rate_limited, cut, idle_timeout, ...); the loop
// reads that without knowing any provider's package.
func streamFault(lane, provider string, err error) Error {
	kind := "stream"
	var fk interface{ FaultKind() string }
	if errors.As(err, &fk) && fk.FaultKind() != "" {
		kind = fk.FaultKind()
	}
	var cut interface{ StreamCut() bool }
	if errors.As(err, &cut) && !cut.StreamCut() {
		return Error{Lane: lane, Kind: kind, Message: fmt.Sprintf(
			"%s failed before its response began (%v); the turn is incomplete", provider, err)}
	}
	return Error{Lane: lane, Kind: kind, Message: fmt.Sprintf(
		"the response from %s was cut before its end (%v); the turn is incomplete and none of its tool calls ran", provider, err)}
}
