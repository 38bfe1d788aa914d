// Package shell is the bash tool family: one command through /bin/bash -lc,
// exactly as written, in the workspace, under the sandbox mode probed at boot
// (see package sandbox), with prefix grants decided by package cmdprefix.
package shell

import (
	"context"
	"os"
	"time"

	"staage/tools"
	"staage/tools/shell/sandbox"
)

// Mode is a sandbox mode: "product", "bench" or "off".
type Mode = sandbox.Mode

// Sandbox is a probed sandbox mode.
type Sandbox = sandbox.Sandbox

// The sandbox modes, strongest first.
const (
	Product = sandbox.Product
	Bench   = sandbox.Bench
	Off     = sandbox.Off
)

// Probe checks the requested mode on this machine (requested "" takes the
// strongest that works and says why in Describe). An explicit mode that
// cannot be honoured is an error with the action to take.
func Probe(ctx context.Context, requested string) (Sandbox, error) {
	return sandbox.Probe(ctx, requested)
}

// HelperMain must be called first by main: when this process was started as
// the sandbox helper it restricts itself and execs the command, and returns
// only on failure (handled true, exitCode to exit with).
func HelperMain() (handled bool, exitCode int) {
	return sandbox.HelperMain()
}

// DefaultTimeout is a command's deadline when Deps gives none.
const DefaultTimeout = 2 * time.Minute

// MaxTimeout is the longest deadline a call may ask for.
const MaxTimeout = 10 * time.Minute

// Deps is what the bash tool needs from the composition.
type Deps struct {
	Workspace string
	Sandbox   Sandbox
	Timeout   time.Duration
	// Env is the console's environment; credentials are removed from it
	// before any command sees it, and product mode keeps only an allowlist.
	// nil means this process's environment.
	Env []string
}

// Declarations declares bash: REQUIRED, irreversible.
func Declarations(deps Deps) []tools.Declaration {
	if deps.Timeout <= 0 {
		deps.Timeout = DefaultTimeout
	}
	if deps.Env == nil {
		deps.Env = os.Environ() // credentials are removed by the sandbox in every mode
	}
	return []tools.Declaration{{
		Origin:  tools.BuiltinOrigin,
		RawName: "bash",
		Description: "Run one command through /bin/bash -lc, exactly as written, in the workspace directory. " +
			"The command is contained by the sandbox mode stated at boot and in every result (product: no network, " +
			"writes only inside the workspace; bench: writes only inside the workspace, network open; off: uncontained). " +
			"stdin is empty and there is no terminal. Output is stdout and stderr interleaved; long output keeps its " +
			"head and tail and reports clippedLines. A non-zero exit is refused as bash.exit with the exit code and " +
			"output; a command past its deadline is killed with everything it started and refused as bash.timeout.",
		Schema: []byte(`{"type":"object","additionalProperties":false,"required":["command"],"properties":{` +
			`"command":{"type":"string","minLength":1,"maxLength":65536,"description":"the command, run by /bin/bash -lc exactly as written"},` +
			`"timeoutSeconds":{"type":"integer","minimum":1,"maximum":600,"description":"deadline in seconds (default 120)"}}}`),
		Policy:  tools.Required,
		Effect:  tools.EffectIrreversible,
		Handler: &bash{deps: deps},
	}}
}
