package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"staage/tools/shell/proc"
)

// Paths inside a product sandbox. /tmp is a private tmpfs per command; the
// private HOME is bound into it from the sandbox's state so caches survive
// between commands of one session.
const (
	innerHome   = "/tmp/home"
	innerHelper = "/tmp/.staage-helper"
)

// devices a command may write: the harmless character devices.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// Exec is one command to run under the sandbox.
type Exec struct {
	Workspace string   // the read-write root; symlinks are resolved
	Dir       string   // working directory inside Workspace; "" is Workspace
	Argv      []string // the program and its arguments, Argv[0] absolute
	Env       []string // the console's environment, before scrubbing
	Timeout   time.Duration
	Limits    proc.Limits
}

// SetupError says the sandbox could not be set up for a command (the helper
// could not restrict itself, bwrap refused): the command did not run.
type SetupError struct {
	Msg string
}

func (e *SetupError) Error() string { return "sandbox setup failed: " + e.Msg }

// Run prepares x under the sandbox, runs it with proc's hygiene and cleans up
// after it. A *SetupError means the command never ran.
func (s Sandbox) Run(ctx context.Context, x Exec) (proc.Result, error) {
	spec, release, err := s.Prepare(ctx, x)
	if err != nil {
		return proc.Result{}, err
	}
	defer release()
	res, err := proc.Run(ctx, spec)
	if err != nil {
		return res, &SetupError{Msg: err.Error()}
	}
	// The helper speaks first: a line starting with its prefix and its exit
	// codes mean the command never ran.
	if s.Mode() != Off && (res.ExitCode == helperFailCode || res.ExitCode == 126) && strings.HasPrefix(res.Output, helperFailPrefix) {
		line, _, _ := strings.Cut(res.Output[len(helperFailPrefix):], "\n")
		return res, &SetupError{Msg: line}
	}
	if s.Mode() == Product && res.ExitCode == 1 && strings.HasPrefix(res.Output, "bwrap: ") {
		line, _, _ := strings.Cut(res.Output, "\n")
		return res, &SetupError{Msg: line}
	}
	return res, nil
}

// Prepare turns x into the program to run. The returned release must be
// called once the program has exited (it removes placeholder mount points).
func (s Sandbox) Prepare(ctx context.Context, x Exec) (proc.Spec, func(), error) {
	nop := func() {}
	if s.st == nil {
		return proc.Spec{}, nop, &SetupError{Msg: "no sandbox mode was probed"}
	}
	if len(x.Argv) == 0 || !filepath.IsAbs(x.Argv[0]) {
		return proc.Spec{}, nop, &SetupError{Msg: "the program must be an absolute path"}
	}
	ws, dir, err := resolveDirs(x.Workspace, x.Dir)
	if err != nil {
		return proc.Spec{}, nop, &SetupError{Msg: err.Error()}
	}
	spec := proc.Spec{Dir: dir, Timeout: x.Timeout, Limits: x.Limits}
	st := s.st
	switch st.mode {
	case Off:
		spec.Path, spec.Args, spec.Env = x.Argv[0], x.Argv, offEnv(x.Env)
		return spec, nop, nil
	case Bench:
		if err := st.installProfile(x.Env); err != nil {
			return proc.Spec{}, nop, &SetupError{Msg: err.Error()}
		}
		h := helperSpec{ABI: st.abi, RW: []string{ws, st.home(), st.tmp()}, RWFiles: devices, Argv: x.Argv}
		arg, err := json.Marshal(h)
		if err != nil {
			return proc.Spec{}, nop, &SetupError{Msg: err.Error()}
		}
		spec.Path, spec.Args = st.exe, []string{st.exe, helperArg, string(arg)}
		spec.Env = append(benchEnv(x.Env, st.home(), st.tmp()), gitGlobal(x.Env)...)
		return spec, nop, nil
	case Product:
		profile, err := st.profileFile(x.Env)
		if err != nil {
			return proc.Spec{}, nop, &SetupError{Msg: err.Error()}
		}
		ms, err := st.protections(ctx, ws, x.Env)
		if err != nil {
			return proc.Spec{}, nop, &SetupError{Msg: err.Error()}
		}
		if profile != "" {
			// Read-only: a command cannot change what later commands run.
			ms = append(ms, mount{op: "--ro-bind", src: profile, dst: innerHome + "/.bash_profile"})
		}
		release := func() { st.release(ms) }
		h := helperSpec{ABI: st.abi, RW: []string{ws, "/tmp", "/dev/shm"}, RWFiles: devices, NoNet: true, Argv: x.Argv}
		args, err := st.bwrapArgs(ws, dir, homeMounts(x.Env, ws), ms, h)
		if err != nil {
			release()
			return proc.Spec{}, nop, &SetupError{Msg: err.Error()}
		}
		spec.Path, spec.Args = st.bwrap, args
		spec.Env = append(productEnv(x.Env, innerHome, "/tmp"), gitGlobal(x.Env)...)
		return spec, release, nil
	}
	return proc.Spec{}, nop, &SetupError{Msg: fmt.Sprintf("unknown mode %q", st.mode)}
}

// bwrapArgs is the bubblewrap command line. As root bwrap keeps every
// capability unless told otherwise: --cap-drop ALL is what stops a command
// from remounting / read-write, and --disable-userns stops it from making a
// nested user namespace to win them back.
func (st *state) bwrapArgs(ws, dir string, home, ms []mount, h helperSpec) ([]string, error) {
	arg, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	a := []string{st.bwrap,
		"--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--disable-userns", "--cap-drop", "ALL", "--die-with-parent", "--new-session",
		"--hostname", "staage-sandbox",
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		"--tmpfs", "/tmp",
		// /run holds the host's service sockets (docker, dbus, postgres): a
		// pathname unix socket ignores the network namespace, and Landlock
		// only covers them from ABI 9.
		"--tmpfs", "/run",
		"--bind", st.home(), innerHome,
		"--ro-bind", st.exe, innerHelper,
	}
	for _, m := range home {
		a = m.append(a)
	}
	a = append(a, "--bind", ws, ws)
	for _, m := range ms {
		a = m.append(a)
	}
	a = append(a, "--chdir", dir, "--", innerHelper, helperArg, string(arg))
	return a, nil
}

func resolveDirs(workspace, dir string) (string, string, error) {
	if workspace == "" || !filepath.IsAbs(workspace) {
		return "", "", fmt.Errorf("workspace %q is not an absolute path", workspace)
	}
	ws, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		return "", "", fmt.Errorf("workspace: %w", err)
	}
	if ws == "/" {
		return "", "", errors.New("the workspace cannot be the root directory")
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return "", "", fmt.Errorf("workspace %s is not a directory", ws)
	}
	if dir == "" {
		return ws, ws, nil
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(ws, dir)
	}
	d, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", "", fmt.Errorf("working directory: %w", err)
	}
	if !within(ws, d) {
		return "", "", fmt.Errorf("working directory %s is outside the workspace", d)
	}
	return ws, d, nil
}

// errHelperMissing is a wiring bug, not a property of the machine: the
// binary did not answer as the helper.
var errHelperMissing = errors.New("the sandbox helper did not answer (is HelperMain called first in main?)")

func lookBwrap() (string, error) {
	return exec.LookPath("bwrap")
}

// selfTest runs the mode once: the helper must restrict itself and prove it
// (a write the ruleset forbids fails, one it allows succeeds); in product
// mode that happens inside bubblewrap, so namespaces and mounts are proven
// too.
func selfTest(ctx context.Context, s Sandbox) error {
	st := s.st
	ws := st.tmp()
	var spec proc.Spec
	switch st.mode {
	case Bench:
		h := helperSpec{ABI: st.abi, RW: []string{ws}, Probe: filepath.Join(st.dir, "deny-probe")}
		arg, _ := json.Marshal(h)
		spec = proc.Spec{Path: st.exe, Args: []string{st.exe, helperArg, string(arg)}}
	case Product:
		h := helperSpec{ABI: st.abi, RW: []string{ws}, NoNet: true, Probe: "/tmp/deny-probe"}
		args, err := st.bwrapArgs(ws, ws, nil, nil, h)
		if err != nil {
			return err
		}
		spec = proc.Spec{Path: st.bwrap, Args: args}
	default:
		return nil
	}
	spec.Env, spec.Dir, spec.Timeout = []string{"PATH=/usr/bin:/bin"}, ws, 10*time.Second
	res, err := proc.Run(ctx, spec)
	if err != nil {
		return err
	}
	if res.ExitCode == 0 && strings.Contains(res.Output, probeMarker) {
		return nil
	}
	out := strings.TrimSpace(res.Output)
	if res.TimedOut {
		return fmt.Errorf("%w: %s", errHelperMissing, out)
	}
	if out == "" {
		out = fmt.Sprintf("exit code %d", res.ExitCode)
	}
	if !strings.Contains(out, helperFailPrefix) && !strings.HasPrefix(out, "bwrap") {
		return fmt.Errorf("%w: %.200s", errHelperMissing, out)
	}
	return errors.New(out)
}
