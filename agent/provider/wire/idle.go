package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"time"
)

// ErrIdleTimeout is the cause when the idle guard cuts a request.
var ErrIdleTimeout = errors.New("no data from the server")

var errUnexpectedEOF = io.ErrUnexpectedEOF

// IdleTransport wraps base so that a request whose response headers do not
// arrive within timeout, or whose body then goes quiet for timeout, is cut
// with ErrIdleTimeout. Any bytes reset the clock, so a server's keep-alive
// pings hold a slow answer open.
func IdleTransport(base http.RoundTripper, timeout time.Duration) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	if timeout <= 0 {
		return base
	}
	return &idleTransport{base: base, timeout: timeout}
}

type idleTransport struct {
	base    http.RoundTripper
	timeout time.Duration
}

func (t *idleTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	timer := time.AfterFunc(t.timeout, func() { cancel(ErrIdleTimeout) })
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		timer.Stop()
		if errors.Is(context.Cause(ctx), ErrIdleTimeout) {
			err = fmt.Errorf("%w: no response headers within %s", ErrIdleTimeout, t.timeout)
		}
		cancel(nil)
		return nil, err
	}
	timer.Reset(t.timeout)
	resp.Body = &idleBody{rc: resp.Body, ctx: ctx, cancel: cancel, timer: timer, timeout: t.timeout}
	return resp, nil
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the base.
func (t *idleTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

type idleBody struct {
	rc      io.ReadCloser
	ctx     context.Context
	cancel  context.CancelCauseFunc
	timer   *time.Timer
	timeout time.Duration
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.timer.Reset(b.timeout)
	}
	if err != nil && err != io.EOF && errors.Is(context.Cause(b.ctx), ErrIdleTimeout) {
		err = fmt.Errorf("%w: silent for %s", ErrIdleTimeout, b.timeout)
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.timer.Stop()
	b.cancel(nil)
	return b.rc.Close()
}

// HTTPClient returns a client for a provider: the caller's client (or a
// fresh one) with its transport wrapped in the idle guard. The caller's
// client is copied, never modified.
func HTTPClient(c *http.Client, idle time.Duration) *http.Client {
	var out http.Client
	if c != nil {
		out = *c
	}
	out.Transport = IdleTransport(out.Transport, idle)
	return &out
}

var urlQuery = regexp.MustCompile(`(https?://[^\s"?]*)\?[^\s"]*`)

// scrub keeps an error line free of URL query strings (a key could travel
// there on some gateways).
func scrub(s string) string { return urlQuery.ReplaceAllString(s, "$1?…") }
