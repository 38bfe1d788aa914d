package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"staage/agent"
	"staage/agent/provider/wire"
)

// DefaultBaseURL is Anthropic's API.
const DefaultBaseURL = "https://api.anthropic.com/"

// Options configure a Provider.
type Options struct {
	// APIKey is sent as the x-api-key header, and nowhere else.
	APIKey string
	// BaseURL defaults to DefaultBaseURL.
	BaseURL string
	// Model is the API's model id, e.g. "claude-sonnet-4-5".
	Model string
	// MaxTokens is used when a Request does not set one; zero means 32000
	// (8192 for claude-3 models, their ceiling).
	MaxTokens int
	// ThinkingBudget > 0 turns on extended thinking with that many tokens
	// (it must stay below MaxTokens). Ignored when AdaptiveThinking is set.
	ThinkingBudget int
	// AdaptiveThinking asks for thinking.type=adaptive (newer models).
	AdaptiveThinking bool
	// HTTPClient is copied and its transport wrapped in the idle guard;
	// nil uses a fresh client.
	HTTPClient *http.Client
	// Retry is the retry and idle-timeout policy.
	Retry wire.Policy
}

// Provider streams Messages API responses.
type Provider struct {
	opts   Options
	client sdk.Client
	name   string
}

// New checks the options and builds the client. It reads nothing from the
// environment: the SDK's environment defaults (ANTHROPIC_BASE_URL, ...) are
// off, so only the operator's resolved configuration decides where a key
// goes.
func New(opts Options) (*Provider, error) {
	if strings.TrimSpace(opts.Model) == "" {
		return nil, errors.New("anthropic: no model given")
	}
	if opts.BaseURL == "" {
		opts.BaseURL = DefaultBaseURL
	}
	if opts.MaxTokens <= 0 {
		opts.MaxTokens = defaultMaxTokens(opts.Model)
	}
	if opts.ThinkingBudget > 0 && opts.ThinkingBudget >= opts.MaxTokens && !opts.AdaptiveThinking {
		return nil, fmt.Errorf("anthropic: thinking budget %d must be below max tokens %d", opts.ThinkingBudget, opts.MaxTokens)
	}
	opts.Retry = opts.Retry.WithDefaults()
	copts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(opts.BaseURL),
		option.WithHTTPClient(wire.HTTPClient(opts.HTTPClient, opts.Retry.IdleTimeout)),
		option.WithMaxRetries(0),
		// x-api-key is the Messages API's documented header; the SDK's
		// WithAPIKey would send a bearer token instead.
		option.WithHeaderDel("authorization"),
	}
	if opts.APIKey != "" {
		copts = append(copts, option.WithHeader("x-api-key", opts.APIKey))
	}
	return &Provider{opts: opts, client: sdk.NewClient(copts...), name: "anthropic/" + opts.Model}, nil
}

// defaultMaxTokens leaves room for a whole-file write: a call cut by the
// limit never runs, so a small default would fail large edits.
func defaultMaxTokens(model string) int {
	if strings.HasPrefix(model, "claude-3") {
		return 8192
	}
	return 32000
}

// Name is "anthropic/<model>".
func (p *Provider) Name() string { return p.name }

// Stream starts one response. The request goes out on the first Next, so
// retries and their warnings are all part of the stream.
func (p *Provider) Stream(ctx context.Context, req agent.Request) (agent.Stream, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, err
	}
	open := func(ctx context.Context) (wire.Attempt, error) {
		s := p.client.Messages.NewStreaming(ctx, params)
		if err := s.Err(); err != nil {
			_ = s.Close()
			return nil, err
		}
		return newAttempt(s), nil
	}
	return wire.NewStream(ctx, "anthropic", p.opts.Retry, open, classify), nil
}

// classify maps the SDK's errors to faults.
func classify(ctx context.Context, err error) *wire.Fault {
	var ae *sdk.Error
	if !errors.As(err, &ae) {
		return nil
	}
	code := string(ae.Type())
	msg := ae.Message
	if ae.StatusCode == http.StatusOK || ae.StatusCode == 0 {
		// An error event inside a 200 stream.
		f := &wire.Fault{Provider: "anthropic", Kind: wire.FaultStreamError, Code: code, Message: msg, Err: err}
		switch code {
		case "overloaded_error", "api_error", "rate_limit_error":
			f.Retryable = true
		}
		if code == "overloaded_error" {
			f.Kind = wire.FaultOverloaded
		}
		return f
	}
	return wire.StatusFault("anthropic", ae.StatusCode, code, msg, responseHeader(ae), err)
}

func responseHeader(ae *sdk.Error) http.Header {
	if ae.Response == nil {
		return nil
	}
	return ae.Response.Header
}
