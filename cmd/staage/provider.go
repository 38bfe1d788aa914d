package main

import (
	"context"
)

// configuredModel loads the operator's configured provider; nil when none
// is configured. (Replaced by the config package's loader.)
func configuredModel(ctx context.Context, opts bootOptions) (*modelSetup, error) {
	if opts.Model != "" {
		return nil, &exitError{code: 2, msg: "--model: providers are not wired in this build yet"}
	}
	return nil, nil
}

func defaultSystem(opts bootOptions) string {
	return "You are a coding agent working in the operator's workspace through staage's tools."
}
