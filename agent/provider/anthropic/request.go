package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"staage/agent"
	"staage/agent/provider/wire"
)

// redactedPrefix marks a redacted_thinking block carried in a
// ThinkingBlock's Signature: its opaque data must go back verbatim, and the
// loop's ThinkingBlock has no other field for it.
const redactedPrefix = "redacted_thinking:"

// params maps a Request to the Messages API.
func (p *Provider) params(req agent.Request) (sdk.MessageNewParams, error) {
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = p.opts.MaxTokens
	}
	params := sdk.MessageNewParams{
		Model:     sdk.Model(p.opts.Model),
		MaxTokens: int64(maxTokens),
	}
	switch {
	case p.opts.AdaptiveThinking:
		params.Thinking = sdk.ThinkingConfigParamUnion{OfAdaptive: &sdk.ThinkingConfigAdaptiveParam{}}
	case p.opts.ThinkingBudget > 0 && p.opts.ThinkingBudget < maxTokens:
		params.Thinking = sdk.ThinkingConfigParamOfEnabled(int64(p.opts.ThinkingBudget))
	}
	// Cache breakpoints: the catalog, the system prompt, and the newest
	// message. The API caches the prefix up to each one, so a turn re-reads
	// everything before its last message from the cache.
	if req.System != "" {
		params.System = []sdk.TextBlockParam{{Text: req.System, CacheControl: sdk.NewCacheControlEphemeralParam()}}
	}
	tools, err := renderTools(req)
	if err != nil {
		return params, err
	}
	params.Tools = tools
	msgs, err := renderMessages(req.Messages)
	if err != nil {
		return params, err
	}
	params.Messages = msgs
	return params, nil
}

// renderTools renders the catalog verbatim. Names come minted and
// normalized from the registry; a name this API cannot take is an error,
// never a silent rename (the loop would then dispatch a name it never
// offered).
func renderTools(req agent.Request) ([]sdk.ToolUnionParam, error) {
	if err := wire.CheckNames("anthropic", req.Tools); err != nil {
		return nil, err
	}
	out := make([]sdk.ToolUnionParam, 0, len(req.Tools))
	for _, t := range req.Tools {
		schema, err := inputSchema(t.Schema)
		if err != nil {
			return nil, fmt.Errorf("anthropic: tool %s: %w", t.Name, err)
		}
		tp := sdk.ToolParam{Name: t.Name, InputSchema: schema}
		if t.Description != "" {
			tp.Description = sdk.String(t.Description)
		}
		out = append(out, sdk.ToolUnionParam{OfTool: &tp})
	}
	if n := len(out); n > 0 {
		out[n-1].OfTool.CacheControl = sdk.NewCacheControlEphemeralParam()
	}
	return out, nil
}

// inputSchema carries a JSON Schema object whole: properties and required
// in their fields, every other keyword as an extra field.
func inputSchema(raw json.RawMessage) (sdk.ToolInputSchemaParam, error) {
	var s sdk.ToolInputSchemaParam
	if len(bytes.TrimSpace(raw)) == 0 {
		return s, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return s, fmt.Errorf("schema is not a JSON object: %w", err)
	}
	if t, ok := m["type"]; ok && t != "object" {
		return s, fmt.Errorf("schema type is %v; tool input must be an object", t)
	}
	delete(m, "type")
	if props, ok := m["properties"]; ok {
		s.Properties = props
		delete(m, "properties")
	}
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				s.Required = append(s.Required, name)
			}
		}
		delete(m, "required")
	}
	if len(m) > 0 {
		s.ExtraFields = m
	}
	return s, nil
}

// renderMessages maps the conversation. Tool results become a user message
// of tool_result blocks in call order; consecutive messages of one role are
// merged (the API wants alternation); empty messages are dropped.
func renderMessages(in []agent.Message) ([]sdk.MessageParam, error) {
	type turn struct {
		assistant bool
		blocks    []sdk.ContentBlockParamUnion
	}
	var turns []turn
	push := func(assistant bool, blocks []sdk.ContentBlockParamUnion) {
		if len(blocks) == 0 {
			return
		}
		if n := len(turns); n > 0 && turns[n-1].assistant == assistant {
			turns[n-1].blocks = append(turns[n-1].blocks, blocks...)
			return
		}
		turns = append(turns, turn{assistant, blocks})
	}
	for _, m := range in {
		switch m.Role {
		case agent.RoleUser:
			if strings.TrimSpace(m.Text) != "" {
				push(false, []sdk.ContentBlockParamUnion{sdk.NewTextBlock(m.Text)})
			}
		case agent.RoleAssistant:
			var blocks []sdk.ContentBlockParamUnion
			for _, th := range m.Thinking {
				switch {
				case th.Text == "" && len(th.Signature) > len(redactedPrefix) && th.Signature[:len(redactedPrefix)] == redactedPrefix:
					blocks = append(blocks, sdk.NewRedactedThinkingBlock(th.Signature[len(redactedPrefix):]))
				case th.Signature != "":
					blocks = append(blocks, sdk.NewThinkingBlock(th.Signature, th.Text))
				}
				// Unsigned thinking (a cut block, another provider's
				// reasoning) cannot be handed back; the API would refuse it.
			}
			// The API refuses a text block that is empty or only
			// whitespace; models often say "\n\n" before a tool call.
			if strings.TrimSpace(m.Text) != "" {
				blocks = append(blocks, sdk.NewTextBlock(m.Text))
			}
			for _, c := range m.ToolCalls {
				input := c.Input
				if len(bytes.TrimSpace(input)) == 0 || !json.Valid(input) {
					input = json.RawMessage(`{}`)
				}
				blocks = append(blocks, sdk.NewToolUseBlock(c.ID, input, c.Name))
			}
			push(true, blocks)
		case agent.RoleTool:
			var blocks []sdk.ContentBlockParamUnion
			for _, r := range m.ToolResults {
				content := r.Content
				if strings.TrimSpace(content) == "" {
					content = "(no output)" // an empty text block is refused
				}
				blocks = append(blocks, sdk.NewToolResultBlock(r.CallID, content, r.IsError))
			}
			push(false, blocks)
		default:
			return nil, fmt.Errorf("anthropic: unknown message role %q", m.Role)
		}
	}
	if n := len(turns); n > 0 {
		last := turns[n-1].blocks
		if cc := last[len(last)-1].GetCacheControl(); cc != nil {
			*cc = sdk.NewCacheControlEphemeralParam()
		}
	}
	out := make([]sdk.MessageParam, len(turns))
	for i, t := range turns {
		if t.assistant {
			out[i] = sdk.NewAssistantMessage(t.blocks...)
		} else {
			out[i] = sdk.NewUserMessage(t.blocks...)
		}
	}
	return out, nil
}
