package config

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"strings"
	"time"
)

// keyCommandTimeout bounds a key_command (a password manager may prompt;
// it must not hang boot forever).
const keyCommandTimeout = 30 * time.Second

// runKeyCommand runs command with /bin/sh -c and returns its first line of
// output. Its stderr goes nowhere and neither its output nor its stderr
// appear in an error: they might hold the key.
func runKeyCommand(ctx context.Context, command string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, keyCommandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("exited with status %d", ee.ExitCode())
		}
		if ctx.Err() != nil {
			return "", fmt.Errorf("did not finish in %s", keyCommandTimeout)
		}
		return "", fmt.Errorf("could not run: %w", err)
	}
	line, _, _ := strings.Cut(out.String(), "\n")
	key := strings.TrimSpace(line)
	if key == "" {
		return "", errors.New("printed no key")
	}
	return key, nil
}

// checkBaseURL refuses a base URL that is not http(s) or that carries
// credentials in it (they would show in every error line).
func checkBaseURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("base URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("base URL %q: want http:// or https://", u.Redacted())
	}
	if u.Host == "" {
		return fmt.Errorf("base URL %q: no host", u.Redacted())
	}
	if u.User != nil {
		return fmt.Errorf("base URL %q: credentials in a URL are not accepted; use key_command or key_env", u.Redacted())
	}
	return nil
}
