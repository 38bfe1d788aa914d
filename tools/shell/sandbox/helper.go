package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// helperArg is os.Args[1] of a helper invocation. It cannot collide with a
// flag or a subcommand staage would ever take.
const helperArg = "__staage-sandbox-helper"

// probeMarker is what a helper prints after a passing self-test.
const probeMarker = "staage-sandbox-selftest-ok"

// helperFailCode is the helper's exit code when it could not restrict
// itself; its stderr then starts with helperFailPrefix.
const (
	helperFailCode   = 125
	helperFailPrefix = "staage-sandbox: "
)

// Landlock ABI bounds: 3 is the first with truncate (writes are fully
// covered), 7 the newest whose behaviour the tests pin.
const (
	minABI = 3
	maxABI = 7
)

// helperSpec is the one argument of a helper invocation.
type helperSpec struct {
	ABI     int      `json:"abi"`
	RW      []string `json:"rw"`      // directories writable (with refer, so renames inside work)
	RWFiles []string `json:"rwFiles"` // single files writable (devices such as /dev/null)
	NoNet   bool     `json:"noNet"`   // deny TCP bind and connect
	// Probe, when set, turns the run into a self-test: after restricting,
	// creating a file at Probe must fail and creating one inside RW[0]
	// must succeed; then the marker is printed and the helper exits.
	Probe string   `json:"probe,omitempty"`
	Argv  []string `json:"argv"`
}

// HelperMain is called first by main (and by the TestMain of packages that
// run commands). When os.Args say this process is the sandbox helper, it
// restricts itself with Landlock and execs the command, and only returns on
// failure (handled is then true and exitCode the code to exit with). In any
// other invocation it returns handled=false and does nothing.
func HelperMain() (handled bool, exitCode int) {
	if len(os.Args) < 3 || os.Args[1] != helperArg {
		return false, 0
	}
	var spec helperSpec
	if err := json.Unmarshal([]byte(os.Args[2]), &spec); err != nil {
		fmt.Fprintf(os.Stderr, "%sbad helper spec: %v\n", helperFailPrefix, err)
		return true, helperFailCode
	}
	// The restriction is per thread: stay on this one until exec replaces
	// the process, and never unlock (the runtime then retires the thread).
	runtime.LockOSThread()
	if err := restrictSelf(spec); err != nil {
		fmt.Fprintf(os.Stderr, "%s%v\n", helperFailPrefix, err)
		return true, helperFailCode
	}
	if spec.Probe != "" {
		if err := selfCheck(spec); err != nil {
			fmt.Fprintf(os.Stderr, "%sself-test: %v\n", helperFailPrefix, err)
			return true, helperFailCode
		}
		fmt.Println(probeMarker)
		return true, 0
	}
	if len(spec.Argv) == 0 {
		fmt.Fprintf(os.Stderr, "%sno command\n", helperFailPrefix)
		return true, helperFailCode
	}
	err := syscall.Exec(spec.Argv[0], spec.Argv, os.Environ())
	fmt.Fprintf(os.Stderr, "%sexec %s: %v\n", helperFailPrefix, spec.Argv[0], err)
	return true, 126
}

func landlockABI() (int, error) {
	v, err := ll.LandlockGetABIVersion()
	if err != nil {
		return 0, fmt.Errorf("landlock_create_ruleset: %w", err)
	}
	return v, nil
}

// configFor is the full Landlock configuration of exactly this ABI: never
// BestEffort, so a kernel that cannot enforce it makes the helper fail.
func configFor(abi int, noNet bool) (landlock.Config, error) {
	var cfg landlock.Config
	switch abi {
	case 3:
		cfg = landlock.V3
	case 4:
		cfg = landlock.V4
	case 5:
		cfg = landlock.V5
	case 6:
		cfg = landlock.V6
	case 7:
		cfg = landlock.V7
	default:
		return cfg, fmt.Errorf("landlock ABI %d is not supported (want %d..%d)", abi, minABI, maxABI)
	}
	if !noNet {
		cfg.HandledAccessNet = 0
	}
	return cfg, nil
}

func restrictSelf(spec helperSpec) error {
	cfg, err := configFor(spec.ABI, spec.NoNet)
	if err != nil {
		return err
	}
	rules := []landlock.Rule{landlock.RODirs("/")}
	for _, d := range spec.RW {
		rules = append(rules, landlock.RWDirs(d).WithRefer())
	}
	for _, f := range spec.RWFiles {
		rules = append(rules, landlock.RWFiles(f).IgnoreIfMissing())
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("landlock ruleset: %w", err)
	}
	if fd < 0 {
		return errors.New("landlock ruleset is empty")
	}
	defer unix.Close(fd)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}

// selfCheck proves the restriction holds: a write the mount allows but the
// ruleset does not must fail, and a write inside the first RW dir succeed.
func selfCheck(spec helperSpec) error {
	f, err := os.OpenFile(spec.Probe, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err == nil {
		f.Close()
		os.Remove(spec.Probe)
		return fmt.Errorf("wrote %s outside the allowed directories", spec.Probe)
	}
	if !errors.Is(err, os.ErrPermission) {
		return fmt.Errorf("write to %s failed for another reason than landlock: %w", spec.Probe, err)
	}
	if len(spec.RW) == 0 {
		return errors.New("no writable directory to check")
	}
	in, err := os.CreateTemp(spec.RW[0], "probe-")
	if err != nil {
		return fmt.Errorf("cannot write inside %s: %w", spec.RW[0], err)
	}
	in.Close()
	return os.Remove(in.Name())
}
