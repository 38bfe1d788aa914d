// Package sandbox is the containment of the commands staage runs for a model:
// three modes (product, bench, off), each probed at boot so that a mode that
// was asked for either keeps its promise or staage refuses to start, and a
// Prepare step that turns a command into the exact program, arguments and
// environment to run under the mode.
//
// product runs the command inside bubblewrap (every capability dropped; user,
// pid, net, ipc and uts namespaces; / read-only; the workspace read-write with
// .git/hooks, .git/config and .staage/ read-only) and, inside that, under
// Landlock. bench runs it under Landlock alone with the network open. off runs
// it as it is. Landlock is applied by re-executing staage's own binary as a
// small helper (see HelperMain) that restricts itself and then execs the
// command.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Mode is a containment mode.
type Mode string

// The three modes, strongest first.
const (
	Product Mode = "product"
	Bench   Mode = "bench"
	Off     Mode = "off"
)

// ParseMode reads a mode as an operator writes it; "" is "choose for me".
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case Product, Bench, Off, "":
		return m, nil
	}
	return "", fmt.Errorf("unknown sandbox mode %q: choose product, bench or off", s)
}

// Sandbox is a probed mode, ready to prepare commands. The zero value is not
// a mode: it prepares nothing, so a composition that forgot to probe fails
// closed. Copies share state; Close removes the private home and temp dir.
type Sandbox struct {
	st *state
}

type state struct {
	mode   Mode
	reason string // why an automatic choice is not the strongest mode
	bwrap  string // path of bwrap (product)
	abi    int    // Landlock ABI used (product, bench)
	exe    string // our own binary, re-executed as the Landlock helper
	user   string // who off-mode commands run as, for the boot report

	dir   string // private state: home/, tmp/, empty/, empty-file
	mu    sync.Mutex
	holds map[string]int        // placeholders in use, see protect.go
	hooks map[string]hooksEntry // core.hooksPath per workspace
}

// Mode is the probed mode ("" for the zero Sandbox).
func (s Sandbox) Mode() Mode {
	if s.st == nil {
		return ""
	}
	return s.st.mode
}

// Reason says why an automatic choice fell back from a stronger mode; empty
// when the strongest mode was taken or the mode was asked for explicitly.
func (s Sandbox) Reason() string {
	if s.st == nil {
		return ""
	}
	return s.st.reason
}

// Describe is the one line for the status bar, the boot report and every
// bash approval: the mode, what contains a command, and the reason for a
// fallback when there was one.
func (s Sandbox) Describe() string {
	if s.st == nil {
		return "none — no sandbox was probed; commands are refused"
	}
	var d string
	switch s.st.mode {
	case Product:
		d = fmt.Sprintf("product — bubblewrap + landlock ABI %d, no network", s.st.abi)
	case Bench:
		d = fmt.Sprintf("bench — landlock ABI %d, writes confined to the workspace, network open", s.st.abi)
	case Off:
		d = "off — commands run uncontained"
	}
	if s.st.reason != "" {
		d += " (" + s.st.reason + ")"
	}
	return d
}

// Status is the short form for the status bar: the mode, and why when an
// automatic choice fell back ("bench — bubblewrap not installed").
func (s Sandbox) Status() string {
	if s.st == nil {
		return "none"
	}
	if s.st.reason != "" {
		return string(s.st.mode) + " — " + s.st.reason
	}
	return string(s.st.mode)
}

// Network says in words whether a command can reach the network.
func (s Sandbox) Network() string {
	switch s.Mode() {
	case Product:
		return "no network (own network namespace, TCP denied by landlock)"
	case Bench:
		return "network open"
	case Off:
		return "network open, uncontained"
	}
	return "unknown"
}

// Report is the boot report's paragraph on the sandbox: what the mode
// promises and, in plain words, what it does not.
func (s Sandbox) Report() string {
	switch s.Mode() {
	case Product:
		return "sandbox product: bash runs in bubblewrap (all capabilities dropped; user, pid, net, ipc and uts namespaces; / read-only; " +
			"the workspace read-write except .git/hooks, .git/config and .staage/; private /tmp and HOME; allowlisted environment) " +
			fmt.Sprintf("and under landlock ABI %d. There is no network.", s.st.abi) + reasonSuffix(s.st.reason)
	case Bench:
		return fmt.Sprintf("sandbox bench: bash runs under landlock ABI %d: writes only to the workspace and a private temp dir, private HOME, "+
			"API keys removed from the environment. THE NETWORK IS OPEN, and .git/hooks and .git/config are writable: "+
			"use bench only where the machine itself is isolated.", s.st.abi) + reasonSuffix(s.st.reason)
	case Off:
		return fmt.Sprintf("sandbox off: bash commands run UNCONTAINED as %s, with full access to this machine's files and network; "+
			"only the approval stands between a model and your machine.", s.st.user) + reasonSuffix(s.st.reason)
	}
	return "sandbox: none probed; bash commands are refused"
}

func reasonSuffix(r string) string {
	if r == "" {
		return ""
	}
	return " (" + r + ")"
}

// Close removes the private state (HOME and temp dir) of the sandbox.
func (s Sandbox) Close() error {
	if s.st == nil || s.st.dir == "" {
		return nil
	}
	return os.RemoveAll(s.st.dir)
}

// ProbeError says that a mode cannot keep its promise on this machine, why,
// and what the operator can do about it.
type ProbeError struct {
	Mode   Mode
	Reason string // short, for a status bar: "bubblewrap not installed"
	Fix    string // the action: "install bubblewrap (apt-get install bubblewrap), or choose --sandbox bench or off"
	Err    error
}

func (e *ProbeError) Error() string {
	msg := fmt.Sprintf("sandbox %s cannot be honoured on this machine: %s", e.Mode, e.Reason)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if e.Fix != "" {
		msg += "; " + e.Fix
	}
	return msg
}

func (e *ProbeError) Unwrap() error { return e.Err }

// Probe checks the requested mode on this machine by running it once. With
// requested "" it takes the strongest mode that works and records why a
// stronger one did not (Reason). An explicit mode that cannot be honoured is a
// *ProbeError: staage must refuse to start rather than degrade quietly.
func Probe(ctx context.Context, requested string) (Sandbox, error) {
	mode, err := ParseMode(requested)
	if err != nil {
		return Sandbox{}, err
	}
	switch mode {
	case Product, Bench, Off:
		return probeMode(ctx, mode, "")
	}
	sb, perr := probeMode(ctx, Product, "")
	if perr == nil {
		return sb, nil
	}
	if errors.Is(perr, errHelperMissing) {
		// A build that cannot run its own helper must not quietly fall
		// back to off: that is a bug to fix, not a machine to live with.
		return Sandbox{}, perr
	}
	why := reasonOf(perr)
	sb, berr := probeMode(ctx, Bench, why)
	if berr == nil {
		return sb, nil
	}
	return probeMode(ctx, Off, why+"; "+reasonOf(berr))
}

func reasonOf(err error) string {
	var pe *ProbeError
	if errors.As(err, &pe) {
		return pe.Reason
	}
	return err.Error()
}

func probeMode(ctx context.Context, mode Mode, reason string) (Sandbox, error) {
	st := &state{mode: mode, reason: reason, holds: map[string]int{}, hooks: map[string]hooksEntry{}}
	st.user = currentUser()
	if mode == Off {
		return Sandbox{st}, nil
	}
	fail := func(r, fix string, err error) (Sandbox, error) {
		if st.dir != "" {
			_ = os.RemoveAll(st.dir)
		}
		return Sandbox{}, &ProbeError{Mode: mode, Reason: r, Fix: fix, Err: err}
	}
	abi, err := landlockABI()
	if err != nil {
		return fail("landlock is not available", landlockFix(mode), err)
	}
	if abi < minABI {
		return fail(fmt.Sprintf("landlock ABI %d is older than %d", abi, minABI), landlockFix(mode), nil)
	}
	st.abi = min(abi, maxABI)
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return fail("cannot find staage's own binary for the sandbox helper", "", err)
	}
	st.exe = exe
	if mode == Product {
		bw, err := lookBwrap()
		if err != nil {
			return fail("bubblewrap not installed", "install bubblewrap (apt-get install bubblewrap), or choose --sandbox bench or --sandbox off", nil)
		}
		st.bwrap = bw
	}
	if err := st.makeDirs(); err != nil {
		return fail("cannot create the sandbox's private directory", "", err)
	}
	if err := selfTest(ctx, Sandbox{st}); err != nil {
		fix := "choose --sandbox bench or --sandbox off"
		if mode == Bench {
			fix = "choose --sandbox off"
		}
		return fail(shortReason(mode, err), fix, err)
	}
	return Sandbox{st}, nil
}

func landlockFix(Mode) string {
	return "use a kernel with landlock enabled (lsm=landlock), or choose --sandbox off"
}

func shortReason(m Mode, err error) string {
	if m == Product && strings.Contains(err.Error(), "namespace") {
		return "bubblewrap cannot create namespaces here"
	}
	return "the " + string(m) + " self-test failed"
}

func currentUser() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return fmt.Sprintf("uid %d", os.Getuid())
}

// makeDirs creates the private state: a random-named directory (never a
// predictable name in /tmp) holding the private HOME and temp dir and the
// empty placeholders that stand in for protected paths that do not exist.
func (st *state) makeDirs() error {
	dir, err := os.MkdirTemp("", "staage-sandbox-")
	if err != nil {
		return err
	}
	st.dir = dir
	for _, d := range []string{"home", "tmp", "empty"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "empty-file"), nil, 0o400); err != nil {
		return err
	}
	return os.Chmod(filepath.Join(dir, "empty"), 0o500)
}

func (st *state) home() string      { return filepath.Join(st.dir, "home") }
func (st *state) tmp() string       { return filepath.Join(st.dir, "tmp") }
func (st *state) emptyDir() string  { return filepath.Join(st.dir, "empty") }
func (st *state) emptyFile() string { return filepath.Join(st.dir, "empty-file") }
