package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"
)

// FaultKind names what went wrong, for the operator and the `error` event.
type FaultKind string

// Fault kinds.
const (
	FaultRateLimited FaultKind = "rate_limited" // 429
	FaultOverloaded  FaultKind = "overloaded"   // 529, overloaded_error
	FaultServer      FaultKind = "server_error" // other 5xx, api_error
	FaultAuth        FaultKind = "auth"         // 401, 403
	FaultRequest     FaultKind = "bad_request"  // other 4xx: our request is wrong
	FaultStreamError FaultKind = "stream_error" // an error event inside a 200 stream
	FaultIdle        FaultKind = "idle_timeout" // bytes stopped arriving
	FaultCut         FaultKind = "cut"          // the body ended before the end marker
	FaultNetwork     FaultKind = "network"      // could not connect, reset, ...
	FaultCanceled    FaultKind = "canceled"     // the operator interrupted
	FaultDecode      FaultKind = "decode"       // a malformed event
)

// Fault is every provider failure, typed. Its Error text is what the
// operator reads: it names the provider and the cause and never carries a
// key or a request header.
type Fault struct {
	Provider string
	Kind     FaultKind
	Status   int    // HTTP status, 0 when none
	Code     string // the API's error type or code, e.g. "overloaded_error"
	Message  string
	// RetryAfter is the server's hint (zero when it sent none). The stream
	// driver reads it from Header when it is not set.
	RetryAfter time.Duration
	// Header is the error response's header, for retry-after.
	Header    http.Header
	Retryable bool
	// AfterOutput is set when the failed attempt had already handed events
	// to the loop: the response was cut, not refused.
	AfterOutput bool
	Err         error
}

// StreamCut reports whether the response was cut after it began (output
// was emitted, or the body ended early), as opposed to refused before any
// output. The loop can ask without importing this package:
//
//	var c interface{ StreamCut() bool }
//	if errors.As(err, &c) && c.StreamCut() { ... }
func (f *Fault) StreamCut() bool { return f.AfterOutput || f.Kind == FaultCut }

// FaultKind names the fault for an error event's kind ("rate_limited",
// "cut", ...), without importing this package.
func (f *Fault) FaultKind() string { return string(f.Kind) }

func (f *Fault) Error() string {
	var b strings.Builder
	if f.Provider != "" {
		b.WriteString(f.Provider)
		b.WriteString(": ")
	}
	b.WriteString(f.Label())
	if f.Message != "" {
		b.WriteString(": ")
		b.WriteString(f.Message)
	}
	return b.String()
}

// Unwrap exposes the cause.
func (f *Fault) Unwrap() error { return f.Err }

// Label is the short cause: "rate limited (429)", "stream cut", ...
func (f *Fault) Label() string {
	var what string
	switch f.Kind {
	case FaultRateLimited:
		what = "rate limited"
	case FaultOverloaded:
		what = "overloaded"
	case FaultServer:
		what = "server error"
	case FaultAuth:
		what = "authentication failed"
	case FaultRequest:
		what = "request refused"
	case FaultStreamError:
		what = "error in stream"
	case FaultIdle:
		what = "stream idle timeout"
	case FaultCut:
		what = "stream cut before its end"
	case FaultNetwork:
		what = "network error"
	case FaultCanceled:
		what = "canceled"
	case FaultDecode:
		what = "malformed stream event"
	default:
		what = string(f.Kind)
	}
	var tags []string
	if f.Status != 0 && f.Status != 200 {
		tags = append(tags, fmt.Sprint(f.Status))
	}
	if f.Code != "" {
		tags = append(tags, f.Code)
	}
	if len(tags) > 0 {
		what += " (" + strings.Join(tags, " ") + ")"
	}
	return what
}

// StatusFault classifies an HTTP error status.
func StatusFault(provider string, status int, code, msg string, header http.Header, err error) *Fault {
	f := &Fault{Provider: provider, Status: status, Code: code, Message: msg, Header: header, Err: err}
	switch {
	case status == 429:
		f.Kind = FaultRateLimited
	case status == 529 || code == "overloaded_error":
		f.Kind = FaultOverloaded
	case status == 401 || status == 403:
		f.Kind = FaultAuth
	case status >= 500:
		f.Kind = FaultServer
	default:
		f.Kind = FaultRequest
	}
	f.Retryable = RetryableStatus(status)
	return f
}

// CommonFault classifies the failures every provider shares: cancellation,
// the idle guard, network errors. It returns nil for anything else.
func CommonFault(ctx context.Context, provider string, err error) *Fault {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrIdleTimeout):
		return &Fault{Provider: provider, Kind: FaultIdle, Message: err.Error(), Retryable: true, Err: err}
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		return &Fault{Provider: provider, Kind: FaultCanceled, Err: err}
	case errors.Is(err, syscall.ECONNREFUSED):
		// Retrying a server that is not running only makes the operator
		// wait for the same answer.
		return &Fault{Provider: provider, Kind: FaultNetwork, Message: "connection refused (is the server running?)", Err: err}
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	if errors.As(err, &se) || errors.As(err, &te) {
		return &Fault{Provider: provider, Kind: FaultDecode, Message: err.Error(), Err: err}
	}
	var ne net.Error
	var oe *net.OpError
	if errors.As(err, &oe) || errors.As(err, &ne) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, errUnexpectedEOF) {
		return &Fault{Provider: provider, Kind: FaultNetwork, Message: scrub(err.Error()), Retryable: true, Err: err}
	}
	return nil
}
