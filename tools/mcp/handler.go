package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"staage/tools"
)

// maxErrorText bounds the text of an isError result or a protocol error
// carried in a refusal's message.
const maxErrorText = 8 << 10

// Payload is what a successful call answers. Text content is joined and
// stripped of control sequences (Stripped counts removals); structured
// content is passed as JSON (control characters are escaped by the
// encoding); images, audio, blobs and links are described, not carried.
type Payload struct {
	Text       string          `json:"text,omitempty"`
	Structured json.RawMessage `json:"structured,omitempty"`
	Omitted    []Omitted       `json:"omitted,omitempty"`
	Stripped   int             `json:"stripped,omitempty"`
	tools.Bounds
}

// Omitted describes a piece of content staage did not pass on.
type Omitted struct {
	Type     string `json:"type"`
	MIMEType string `json:"mimeType,omitempty"`
	URI      string `json:"uri,omitempty"`
	Bytes    int    `json:"bytes,omitempty"`
}

// handler runs one tool of one server.
type handler struct {
	s   *server
	raw string
}

// Run checks the tool is still the one pinned at boot, then calls it with
// the validated canonical arguments.
func (h *handler) Run(ctx context.Context, call tools.Call) tools.Result {
	s := h.s
	if r := s.down(); r != nil {
		return r
	}
	cctx, cancel := context.WithTimeout(ctx, s.o.opts.CallTimeout)
	defer cancel()

	// The rug-pull check: the server is listed again and the tool must be
	// there with the schema that was approved. A server that never sends
	// list_changed is caught here too.
	listed, err := s.list(cctx)
	if err != nil {
		return s.callError(ctx, cctx, "tools/list", err)
	}
	now := s.compare(listed)
	t, ok := now[h.raw]
	if !ok {
		return tools.Refuse(tools.MCPUnavailable, fmt.Sprintf("MCP server %s no longer offers %q; staage must restart to pick up its new tool list", s.name, h.raw)).
			With("server", s.name).With("tool", h.raw)
	}
	if schema, err := schemaOf(t); err != nil || !bytes.Equal(schema, s.pins[h.raw].schema) {
		return tools.Refuse(tools.MCPUnavailable, fmt.Sprintf("MCP server %s changed the tool %q since staage started (its schema differs from the approved one); staage must restart to pick up the new descriptor", s.name, h.raw)).
			With("server", s.name).With("tool", h.raw)
	}

	args := call.Args
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage(`{}`)
	}
	res, err := s.session.Load().CallTool(cctx, &sdk.CallToolParams{Name: h.raw, Arguments: args})
	if err != nil {
		return s.callError(ctx, cctx, "tools/call", err)
	}
	if res.IsError {
		p := s.payload(res, maxErrorText)
		msg := p.Text
		if msg == "" {
			msg = "(no text)"
		}
		if p.Truncated {
			msg += " …"
		}
		return tools.Refuse(tools.MCPError, fmt.Sprintf("MCP server %s answered %q with an error: %s", s.name, h.raw, msg)).
			With("server", s.name).With("tool", h.raw)
	}
	return tools.Ok{Payload: s.payload(res, s.o.opts.MaxResultBytes)}
}

// down answers for a server that is known to be gone.
func (s *server) down() *tools.Refusal {
	if s.closing.Load() {
		return tools.Refuse(tools.MCPUnavailable, fmt.Sprintf("MCP server %s was stopped", s.name)).With("server", s.name)
	}
	select {
	case <-s.exited:
		return s.gone()
	default:
		return nil
	}
}

func (s *server) gone() *tools.Refusal {
	return tools.Refuse(tools.MCPUnavailable, fmt.Sprintf("MCP server %s is not running%s; staage must restart to start it again", s.name, s.stderrNote())).
		With("server", s.name)
}

// callError types a failed request: the caller's cancel, our deadline, a
// dead server, or an error the server answered.
func (s *server) callError(ctx, cctx context.Context, method string, err error) *tools.Refusal {
	var wire *jsonrpc.Error
	switch {
	case ctx.Err() != nil:
		return tools.Refuse(tools.ToolCancelled, "interrupted while MCP server "+s.name+" was working").With("server", s.name)
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return tools.Refuse(tools.MCPUnavailable, fmt.Sprintf("MCP server %s did not answer %s within %s", s.name, method, s.o.opts.CallTimeout)).
			With("server", s.name)
	case s.down() != nil, errors.Is(err, sdk.ErrConnectionClosed):
		return s.gone()
	case errors.As(err, &wire) && wire.Code != -32003 && wire.Code != -32004:
		// -32003/-32004 are the SDK's own "closing" errors, not the
		// server's answer.
		msg, _ := clip(s.line(wire.Message), maxErrorText)
		return tools.Refuse(tools.MCPError, fmt.Sprintf("MCP server %s refused %s: %s", s.name, method, msg)).
			With("server", s.name).With("code", wire.Code)
	default:
		return s.gone()
	}
}

// payload bounds a result: text first, then structured content if it fits.
func (s *server) payload(res *sdk.CallToolResult, max int) Payload {
	var p Payload
	var text []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			text = append(text, c.Text)
		case *sdk.ImageContent:
			p.Omitted = append(p.Omitted, Omitted{Type: "image", MIMEType: oneLine(c.MIMEType), Bytes: len(c.Data)})
		case *sdk.AudioContent:
			p.Omitted = append(p.Omitted, Omitted{Type: "audio", MIMEType: oneLine(c.MIMEType), Bytes: len(c.Data)})
		case *sdk.ResourceLink:
			p.Omitted = append(p.Omitted, Omitted{Type: "resource_link", MIMEType: oneLine(c.MIMEType), URI: oneLine(c.URI)})
		case *sdk.EmbeddedResource:
			if c.Resource == nil {
				continue
			}
			if c.Resource.Text != "" {
				text = append(text, c.Resource.Text)
				continue
			}
			p.Omitted = append(p.Omitted, Omitted{Type: "resource", MIMEType: oneLine(c.Resource.MIMEType), URI: oneLine(c.Resource.URI), Bytes: len(c.Resource.Blob)})
		default:
			p.Omitted = append(p.Omitted, Omitted{Type: fmt.Sprintf("%T", c)})
		}
	}
	joined := strings.Join(text, "\n")
	// Clip before stripping so a huge answer costs no more than the cap
	// to clean; the strip can only shorten it.
	joined, cut := clip(joined, max)
	p.Text, p.Stripped = strip(joined)
	p.Text = s.hide(p.Text)
	p.Truncated = cut
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err == nil && s.secret != nil {
			b = []byte(s.secret.Replace(string(b)))
		}
		switch {
		case err != nil || !json.Valid(b):
			p.Omitted = append(p.Omitted, Omitted{Type: "structured"})
		case len(b) > max-len(p.Text):
			p.Omitted = append(p.Omitted, Omitted{Type: "structured", Bytes: len(b)})
			p.Truncated = true
		default:
			p.Structured = b
		}
	}
	return p
}
