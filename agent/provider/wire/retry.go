package wire

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Policy says how hard a provider tries before it gives up.
type Policy struct {
	// MaxAttempts counts the first try (1 = never retry). Zero means 4.
	MaxAttempts int
	// BaseDelay is the first backoff step; it doubles each retry. Zero
	// means 1s.
	BaseDelay time.Duration
	// MaxDelay caps one computed backoff step. Zero means 30s.
	MaxDelay time.Duration
	// MaxRetryAfter caps a server's retry-after: a server asking for an hour
	// gets this long instead (the warning says what was asked). Zero means
	// 60s.
	MaxRetryAfter time.Duration
	// IdleTimeout cuts a response whose bytes stop arriving (pings count as
	// bytes), and a request whose headers never come. Zero means 90s;
	// negative disables it.
	IdleTimeout time.Duration
	// Sleep waits between attempts; nil sleeps on a timer. Tests record the
	// delays instead of waiting them out.
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter maps a backoff step to the delay actually used; nil is full
	// jitter in [d/2, d]. Tests pin it.
	Jitter func(d time.Duration) time.Duration
	// Now is the clock for HTTP-date retry-after; nil is time.Now.
	Now func() time.Time
}

// WithDefaults fills the zero fields.
func (p Policy) WithDefaults() Policy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 4
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = time.Second
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 30 * time.Second
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = 60 * time.Second
	}
	if p.IdleTimeout == 0 {
		p.IdleTimeout = 90 * time.Second
	}
	if p.Sleep == nil {
		p.Sleep = sleep
	}
	if p.Jitter == nil {
		p.Jitter = halfJitter
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	return p
}

// Backoff is the delay before retry number n (1 = the first retry) when the
// server gave no retry-after.
func (p Policy) Backoff(n int) time.Duration {
	d := p.BaseDelay
	for i := 1; i < n && d < p.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, p.MaxDelay)
	return p.Jitter(d)
}

// Delay is the wait before retry n after fault f: the server's retry-after
// when it sent one (capped), else the jittered backoff. capped reports that
// the server asked for more than MaxRetryAfter.
func (p Policy) Delay(n int, f *Fault) (d time.Duration, capped bool) {
	if f.RetryAfter > 0 {
		if f.RetryAfter > p.MaxRetryAfter {
			return p.MaxRetryAfter, true
		}
		return f.RetryAfter, false
	}
	return p.Backoff(n), false
}

// halfJitter spreads retries of many clients apart without ever retrying
// sooner than half the step.
func halfJitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2+1)
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// RetryAfter reads a response's wait hint: retry-after-ms (milliseconds,
// sent by OpenAI), retry-after in seconds (fractions allowed) or as an HTTP
// date. ok is false when there is no usable hint; a date in the past is a
// hint of zero.
func RetryAfter(h http.Header, now time.Time) (d time.Duration, ok bool) {
	if h == nil {
		return 0, false
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s < 0 || s > 1e9 { // negative or absurd: no usable hint
			return 0, false
		}
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d, true
		}
		return 0, true
	}
	return 0, false
}

// RetryableStatus says whether an HTTP status is worth another attempt:
// 408, 409 (lock timeouts), 429, 5xx and Anthropic's 529 overloaded.
func RetryableStatus(code int) bool {
	switch {
	case code == http.StatusRequestTimeout, code == http.StatusConflict, code == http.StatusTooManyRequests:
		return true
	case code >= 500:
		return true
	}
	return false
}
