// Package openai is the Provider for OpenAI's Chat Completions API and every
// server that speaks it (Ollama, vLLM, llama.cpp, LM Studio, OpenRouter),
// on the official SDK (openai-go). The SDK builds the request and splits the
// server-sent events; this package maps the conversation and the catalog,
// reassembles tool calls whose arguments arrive in fragments and interleave
// by index, and leaves retries to package wire.
package openai
