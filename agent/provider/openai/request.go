package openai

import (
	"bytes"
	"encoding/json"
	"fmt"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"staage/agent"
	"staage/agent/provider/wire"
)

// params maps a Request to Chat Completions.
func (p *Provider) params(req agent.Request) (sdk.ChatCompletionNewParams, error) {
	params := sdk.ChatCompletionNewParams{
		Model:         shared.ChatModel(p.opts.Model),
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)},
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = p.opts.MaxTokens
	}
	if maxTokens > 0 {
		if p.opts.LegacyMaxTokens {
			params.MaxTokens = param.NewOpt(int64(maxTokens))
		} else {
			params.MaxCompletionTokens = param.NewOpt(int64(maxTokens))
		}
	}
	if err := wire.CheckNames(p.opts.Label, req.Tools); err != nil {
		return params, err
	}
	for _, t := range req.Tools {
		fn := shared.FunctionDefinitionParam{Name: t.Name}
		if t.Description != "" {
			fn.Description = param.NewOpt(t.Description)
		}
		if len(bytes.TrimSpace(t.Schema)) > 0 {
			var schema map[string]any
			if err := json.Unmarshal(t.Schema, &schema); err != nil {
				return params, fmt.Errorf("%s: tool %s: schema is not a JSON object: %w", p.opts.Label, t.Name, err)
			}
			fn.Parameters = schema
		} else {
			fn.Parameters = shared.FunctionParameters{"type": "object", "properties": map[string]any{}}
		}
		params.Tools = append(params.Tools, sdk.ChatCompletionFunctionTool(fn))
	}
	if req.System != "" {
		params.Messages = append(params.Messages, sdk.SystemMessage(req.System))
	}
	for _, m := range req.Messages {
		switch m.Role {
		case agent.RoleUser:
			params.Messages = append(params.Messages, sdk.UserMessage(m.Text))
		case agent.RoleAssistant:
			if m.Text == "" && len(m.ToolCalls) == 0 {
				continue
			}
			var a sdk.ChatCompletionAssistantMessageParam
			if m.Text != "" {
				a.Content.OfString = param.NewOpt(m.Text)
			}
			for _, c := range m.ToolCalls {
				args := string(c.Input)
				if len(bytes.TrimSpace(c.Input)) == 0 {
					args = "{}"
				}
				a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
						ID:       c.ID,
						Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: args},
					},
				})
			}
			params.Messages = append(params.Messages, sdk.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case agent.RoleTool:
			// One tool message per result, in call order. The API has no
			// error flag: a refusal's JSON says what it is.
			for _, r := range m.ToolResults {
				params.Messages = append(params.Messages, sdk.ToolMessage(r.Content, r.CallID))
			}
		default:
			return params, fmt.Errorf("%s: unknown message role %q", p.opts.Label, m.Role)
		}
	}
	return params, nil
}
