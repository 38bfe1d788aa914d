package agent

import (
	"context"
	"encoding/json"

	"staage/tools"
)

// Provider is a model behind a wire. The loop asks for one streamed response
// per step. Implementations own retries and the wire mapping; the loop owns
// what the stream means.
type Provider interface {
	// Name is what the status bar shows, e.g. "anthropic/claude-sonnet-4-5"
	// or "offline demo".
	Name() string
	// Stream starts one model response. Cancelling ctx must close the
	// underlying body and end the stream promptly.
	Stream(ctx context.Context, req Request) (Stream, error)
}

// Stream is a pull iterator over one response. Next returns io.EOF after the
// final event (which is always a StreamStop on a complete response); any
// other error means the response was cut and is incomplete.
type Stream interface {
	Next() (StreamEvent, error)
	Close() error
}

// Request is one model call.
type Request struct {
	System    string
	Messages  []Message
	Tools     []tools.CatalogEntry
	MaxTokens int
}

// Role of a message in the conversation.
type Role string

// Conversation roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	// RoleTool carries the results of the previous assistant message's tool
	// calls, in call order.
	RoleTool Role = "tool"
)

// Message is one turn of the conversation as the loop keeps it.
type Message struct {
	Role        Role             `json:"role"`
	Text        string           `json:"text,omitempty"`
	Thinking    []ThinkingBlock  `json:"thinking,omitempty"`
	ToolCalls   []ToolCallPart   `json:"toolCalls,omitempty"`
	ToolResults []ToolResultPart `json:"toolResults,omitempty"`
}

// ThinkingBlock is extended thinking a provider must be handed back verbatim
// (Anthropic signs it).
type ThinkingBlock struct {
	Text      string `json:"text"`
	Signature string `json:"signature,omitempty"`
}

// ToolCallPart is one tool call the model made.
type ToolCallPart struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// ToolResultPart answers one tool call. Content is the JSON of the
// tools.WireResult; IsError is set for refusals.
type ToolResultPart struct {
	CallID  string `json:"callId"`
	Name    string `json:"name"`
	Content string `json:"content"`
	IsError bool   `json:"isError,omitempty"`
}

// StreamEvent is one item of a provider stream. Exactly one field group is
// set, named by Kind.
type StreamEvent struct {
	Kind StreamKind
	// Text for StreamText and StreamThinking.
	Text string
	// Signature closes a thinking block (StreamThinking with empty Text).
	Signature string
	// Index identifies a tool call within the response (several may
	// interleave); ID and Name arrive with StreamToolStart, argument
	// fragments with StreamToolDelta, StreamToolEnd closes it.
	Index int
	ID    string
	Name  string
	// ArgsDelta is a fragment of the call's JSON arguments.
	ArgsDelta string
	// Usage for StreamUsage (cumulative for this response).
	Usage Usage
	// StopReason for StreamStop: "end_turn", "tool_use", "max_tokens", ...
	StopReason string
	// Message for StreamWarning: a fault the provider recovered from or a
	// notice for the operator (a retry, an error event mid-stream).
	Message string
}

// StreamKind names a StreamEvent.
type StreamKind int

// Stream event kinds.
const (
	StreamText StreamKind = iota + 1
	StreamThinking
	StreamToolStart
	StreamToolDelta
	StreamToolEnd
	StreamUsage
	StreamStop
	StreamWarning
)

// Usage counts tokens of one response.
type Usage struct {
	InputTokens      int64 `json:"inputTokens"`
	OutputTokens     int64 `json:"outputTokens"`
	CacheReadTokens  int64 `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens int64 `json:"cacheWriteTokens,omitempty"`
}
