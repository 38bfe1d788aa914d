// Package rails declares the four knowledge rails: bank_search, bank_get and
// librarian over an operator's knowledge store, and research on the open
// web. Each is one request/response read, offered only when its endpoint and
// credential come from the environment: an endpoint belongs to whoever runs
// the console, so none is written into this package.
package rails

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"staage/tools"
)

// Environment variables that configure the rails.
const (
	EnvBankURL       = "STAAGE_BANK_URL"
	EnvBankToken     = "STAAGE_BANK_TOKEN"
	EnvResearchURL   = "STAAGE_RESEARCH_URL"
	EnvResearchToken = "STAAGE_RESEARCH_TOKEN"
)

// MaxResponseBytes bounds what one rail answer may bring into the context.
const MaxResponseBytes = 256 << 10

// Endpoint is one service address with its credential. The token is never
// printed.
type Endpoint struct {
	URL   string
	Token Secret
}

// Secret is a credential that renders as a redaction wherever it is printed.
type Secret string

// String redacts.
func (Secret) String() string { return "[redacted]" }

// GoString redacts.
func (Secret) GoString() string { return "[redacted]" }

// MarshalJSON redacts.
func (Secret) MarshalJSON() ([]byte, error) { return []byte(`"[redacted]"`), nil }

// Configured reports whether both halves are present.
func (e Endpoint) Configured() bool { return e.URL != "" && e.Token != "" }

// Config is the rails' endpoints.
type Config struct {
	Bank     Endpoint
	Research Endpoint
	Client   *http.Client
}

// FromEnv reads the rails' configuration from the environment.
func FromEnv(getenv func(string) string) Config {
	return Config{
		Bank:     Endpoint{URL: getenv(EnvBankURL), Token: Secret(getenv(EnvBankToken))},
		Research: Endpoint{URL: getenv(EnvResearchURL), Token: Secret(getenv(EnvResearchToken))},
	}
}

// Missing names the rails that are not configured, and why.
func (c Config) Missing() []string {
	var out []string
	if !c.Bank.Configured() {
		out = append(out, fmt.Sprintf("bank_search, bank_get, librarian: %s and %s are not both set", EnvBankURL, EnvBankToken))
	}
	if !c.Research.Configured() {
		out = append(out, fmt.Sprintf("research: %s and %s are not both set", EnvResearchURL, EnvResearchToken))
	}
	return out
}

// Declarations returns the rails whose credentials are present.
func Declarations(c Config) []tools.Declaration {
	client := c.Client
	if client == nil {
		client = &http.Client{Timeout: 90 * time.Second}
	}
	var out []tools.Declaration
	if c.Bank.Configured() {
		bank := caller{ep: c.Bank, client: client}
		out = append(out,
			decl("bank_search", "Semantic search over the operator's knowledge store. Returns ranked post summaries with slugs; fetch one in full with bank_get.",
				`{"type":"object","properties":{"query":{"type":"string","minLength":1,"maxLength":2000},"limit":{"type":"integer","minimum":1,"maximum":50}},"required":["query"],"additionalProperties":false}`,
				func(ctx context.Context, a map[string]any) tools.Result { return bank.post(ctx, "/search", a) }),
			decl("bank_get", "One post of the knowledge store by slug, in full.",
				`{"type":"object","properties":{"slug":{"type":"string","minLength":1,"maxLength":300,"pattern":"^[A-Za-z0-9][A-Za-z0-9._-]*$"}},"required":["slug"],"additionalProperties":false}`,
				func(ctx context.Context, a map[string]any) tools.Result {
					slug, _ := a["slug"].(string)
					return bank.get(ctx, "/posts/"+url.PathEscape(slug))
				}),
			decl("librarian", "One approved hunt over the knowledge store: two to four angles on one question, answered as a ranked manifest of posts — a map, not the territory.",
				`{"type":"object","properties":{"question":{"type":"string","minLength":1,"maxLength":2000},"angles":{"type":"array","items":{"type":"string","minLength":1,"maxLength":500},"minItems":2,"maxItems":4}},"required":["question","angles"],"additionalProperties":false}`,
				func(ctx context.Context, a map[string]any) tools.Result { return bank.post(ctx, "/librarian", a) }),
		)
	}
	if c.Research.Configured() {
		research := caller{ep: c.Research, client: client}
		out = append(out, decl("research", "One live question answered from the open web, with citations. Leaves this machine for a third party; pinned to the cheapest tier.",
			`{"type":"object","properties":{"question":{"type":"string","minLength":1,"maxLength":2000}},"required":["question"],"additionalProperties":false}`,
			func(ctx context.Context, a map[string]any) tools.Result {
				a["tier"] = "cheapest"
				return research.post(ctx, "/research", a)
			}))
	}
	return out
}

func decl(name, desc, schema string, run func(context.Context, map[string]any) tools.Result) tools.Declaration {
	return tools.Declaration{
		Origin: tools.BuiltinOrigin, RawName: name, Description: desc, Schema: json.RawMessage(schema),
		Policy: tools.Required, Effect: tools.EffectRead,
		Handler: tools.HandlerFunc(func(ctx context.Context, call tools.Call) tools.Result {
			var a map[string]any
			if err := call.Decode(&a); err != nil {
				return tools.Refuse(tools.ArgsInvalid, err.Error())
			}
			return run(ctx, a)
		}),
	}
}

type caller struct {
	ep     Endpoint
	client *http.Client
}

// Payload is a rail's answer: the service's JSON, bounded.
type Payload struct {
	tools.Bounds
	Answer json.RawMessage `json:"answer,omitempty"`
	// Text holds an answer that was cut (no longer valid JSON) or not JSON.
	Text string `json:"text,omitempty"`
}

func (c caller) post(ctx context.Context, path string, body map[string]any) tools.Result {
	b, err := json.Marshal(body)
	if err != nil {
		return tools.Refuse(tools.ArgsInvalid, err.Error())
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(c.ep.URL, "/")+path, bytes.NewReader(b))
	if err != nil {
		return tools.Refuse(tools.RailUnavailable, "bad endpoint: "+err.Error())
	}
	req.Header.Set("Content-Type", "application/json")
	return c.do(req)
}

func (c caller) get(ctx context.Context, path string) tools.Result {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(c.ep.URL, "/")+path, nil)
	if err != nil {
		return tools.Refuse(tools.RailUnavailable, "bad endpoint: "+err.Error())
	}
	return c.do(req)
}

func (c caller) do(req *http.Request) tools.Result {
	req.Header.Set("Authorization", "Bearer "+string(c.ep.Token))
	req.Header.Set("Accept", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return tools.Refuse(tools.ToolCancelled, "the request was cancelled")
		}
		// The error text can include the URL but never the token header.
		return tools.Refuse(tools.RailUnavailable, "the rail did not answer: "+err.Error())
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return tools.Refuse(tools.RailUnavailable, "reading the answer: "+err.Error())
	}
	if resp.StatusCode/100 != 2 {
		snippet := string(body[:min(len(body), 300)])
		return tools.Refuse(tools.RailUnavailable, fmt.Sprintf("the rail answered HTTP %d", resp.StatusCode)).
			With("status", resp.StatusCode).With("body", snippet)
	}
	var p Payload
	if len(body) > MaxResponseBytes {
		p.Truncated = true
		p.Text = string(body[:MaxResponseBytes])
		return tools.Ok{Payload: p}
	}
	if json.Valid(body) {
		p.Answer = body
	} else {
		p.Text = string(body)
	}
	return tools.Ok{Payload: p}
}
