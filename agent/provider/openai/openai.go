package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"staage/agent"
	"staage/agent/provider/wire"
)

// DefaultBaseURL is OpenAI's API.
const DefaultBaseURL = "https://api.openai.com/v1/"

// Options configure a Provider.
type Options struct {
	// APIKey is sent as a bearer token when set; a local server needs none.
	APIKey string
	// BaseURL defaults to DefaultBaseURL; any OpenAI-compatible server's
	// /v1 root works.
	BaseURL string
	// Model is the server's model id, e.g. "gpt-5" or "qwen3:8b".
	Model string
	// MaxTokens is used when a Request does not set one; zero lets the
	// server decide.
	MaxTokens int
	// LegacyMaxTokens sends max_tokens instead of max_completion_tokens
	// (what most OpenAI-compatible servers read).
	LegacyMaxTokens bool
	// Label prefixes Name and error lines: "openai", "ollama", ...
	Label string
	// HTTPClient is copied and its transport wrapped in the idle guard.
	HTTPClient *http.Client
	// Retry is the retry and idle-timeout policy.
	Retry wire.Policy
}

// Provider streams chat completions.
type Provider struct {
	opts   Options
	client sdk.Client
	name   string
}

// New checks the options and builds the client. The client is assembled
// from our options alone: the SDK's environment defaults (OPENAI_API_KEY,
// OPENAI_BASE_URL, OPENAI_CUSTOM_HEADERS, ...) are never read, so a key
// from the environment cannot travel to a base URL it was not meant for.
func New(opts Options) (*Provider, error) {
	if strings.TrimSpace(opts.Model) == "" {
		return nil, errors.New("openai: no model given")
	}
	if opts.BaseURL == "" {
		opts.BaseURL = DefaultBaseURL
	}
	if !strings.HasSuffix(opts.BaseURL, "/") {
		opts.BaseURL += "/"
	}
	if opts.Label == "" {
		opts.Label = "openai"
	}
	opts.Retry = opts.Retry.WithDefaults()
	copts := []option.RequestOption{
		option.WithBaseURL(opts.BaseURL),
		option.WithHTTPClient(wire.HTTPClient(opts.HTTPClient, opts.Retry.IdleTimeout)),
		option.WithMaxRetries(0),
	}
	if opts.APIKey != "" {
		copts = append(copts, option.WithHeader("Authorization", "Bearer "+opts.APIKey))
	}
	return &Provider{opts: opts, client: sdk.Client{Options: copts}, name: opts.Label + "/" + opts.Model}, nil
}

// Name is "<label>/<model>".
func (p *Provider) Name() string { return p.name }

// Stream starts one response; the request goes out on the first Next.
func (p *Provider) Stream(ctx context.Context, req agent.Request) (agent.Stream, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, err
	}
	label := p.opts.Label
	open := func(ctx context.Context) (wire.Attempt, error) {
		var raw *http.Response
		err := p.client.Post(ctx, "chat/completions", params, &raw, option.WithJSONSet("stream", true))
		if err != nil {
			if raw != nil && raw.Body != nil {
				_ = raw.Body.Close()
			}
			return nil, err
		}
		return newAttempt(label, ssestream.NewDecoder(raw)), nil
	}
	classify := func(ctx context.Context, err error) *wire.Fault {
		var ae *sdk.Error
		if !errors.As(err, &ae) {
			return nil
		}
		code := ae.Type
		if ae.Code != "" && ae.Code != code {
			code = strings.TrimSpace(code + " " + ae.Code)
		}
		msg := ae.Message
		if msg == "" {
			msg = http.StatusText(ae.StatusCode)
		}
		var h http.Header
		if ae.Response != nil {
			h = ae.Response.Header
		}
		return wire.StatusFault(label, ae.StatusCode, code, msg, h, err)
	}
	return wire.NewStream(ctx, label, p.opts.Retry, open, classify), nil
}

// streamError is an {"error": {...}} object inside a 200 stream.
type streamError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    any    `json:"code"`
}

func (e streamError) fault(label string) *wire.Fault {
	code := e.Type
	if e.Code != nil {
		if c := fmt.Sprint(e.Code); c != "" && c != code {
			code = strings.TrimSpace(code + " " + c)
		}
	}
	f := &wire.Fault{Provider: label, Kind: wire.FaultStreamError, Code: code, Message: e.Message}
	switch {
	case strings.Contains(code, "server_error"), strings.Contains(code, "overloaded"), strings.Contains(code, "rate_limit"),
		strings.Contains(code, "429"), strings.Contains(code, "502"), strings.Contains(code, "503"):
		f.Retryable = true
	}
	return f
}
