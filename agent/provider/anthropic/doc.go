// Package anthropic is the Provider for Anthropic's Messages API, on the
// official SDK (anthropic-sdk-go). The SDK builds requests and decodes the
// server-sent events; this package maps the conversation and the catalog to
// the API's shapes, maps stream events back to agent.StreamEvent, marks the
// system prompt and the tool catalog for prompt caching, and leaves retries
// to package wire (the SDK's own retries are off so ours are the only ones
// and are testable).
package anthropic
