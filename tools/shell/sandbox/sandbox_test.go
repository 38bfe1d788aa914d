package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"staage/tools/shell/proc"
)

func TestMain(m *testing.M) {
	if handled, code := HelperMain(); handled {
		os.Exit(code)
	}
	code := m.Run()
	for _, r := range probed.m {
		r.sb.Close()
	}
	os.Exit(code)
}

// probed caches one probe per mode for the test binary: a probe starts the
// helper once, and the machine is small.
var probed = struct {
	sync.Mutex
	m map[Mode]probeResult
}{m: map[Mode]probeResult{}}

type probeResult struct {
	sb  Sandbox
	err error
}

// probe returns the mode or ends the test: a missing primitive fails the test
// under CI (where .ci/run installs bubblewrap) and skips it elsewhere.
func probe(t *testing.T, mode Mode) Sandbox {
	t.Helper()
	probed.Lock()
	r, ok := probed.m[mode]
	if !ok {
		r.sb, r.err = Probe(context.Background(), string(mode))
		probed.m[mode] = r
	}
	probed.Unlock()
	if r.err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("probe %s under CI: %v", mode, r.err)
		}
		t.Skipf("probe %s: %v", mode, r.err)
	}
	return r.sb
}

// testEnv is a console environment with a throwaway HOME: root's real shell
// rc is slow, and the test must not depend on it.
func testEnv(t *testing.T) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANG=C.UTF-8",
		"ANTHROPIC_API_KEY=sk-ant-secret-value", "MY_SERVICE_TOKEN=abc", "PLAIN=kept"}
}

func runIn(t *testing.T, sb Sandbox, ws, script string, timeout time.Duration) proc.Result {
	t.Helper()
	res, err := sb.Run(context.Background(), Exec{Workspace: ws, Argv: []string{"/bin/bash", "-lc", script},
		Env: testEnv(t), Timeout: timeout})
	if err != nil {
		t.Fatalf("run %q: %v\n%s", script, err, res.Output)
	}
	return res
}

var modes = []Mode{Product, Bench, Off}

func TestWritesInsideSucceed(t *testing.T) {
	for _, m := range modes {
		t.Run(string(m), func(t *testing.T) {
			sb := probe(t, m)
			ws := t.TempDir()
			res := runIn(t, sb, ws, "mkdir -p sub && echo hi > sub/f && cat sub/f", time.Minute)
			if res.ExitCode != 0 || res.Output != "hi\n" {
				t.Fatalf("exit %d: %q", res.ExitCode, res.Output)
			}
			if b, _ := os.ReadFile(filepath.Join(ws, "sub", "f")); string(b) != "hi\n" {
				t.Fatalf("file on the host: %q", b)
			}
		})
	}
}

func TestWritesOutsideFail(t *testing.T) {
	for _, m := range modes {
		t.Run(string(m), func(t *testing.T) {
			sb := probe(t, m)
			ws := t.TempDir()
			outside := t.TempDir()
			target := filepath.Join(outside, "escaped")
			res := runIn(t, sb, ws, fmt.Sprintf("echo x > %q; echo rc=$?", target), time.Minute)
			_, statErr := os.Stat(target)
			if m == Off {
				if statErr != nil {
					t.Fatalf("off mode is uncontained, the write should land: %q", res.Output)
				}
				return
			}
			if statErr == nil {
				t.Fatalf("%s: a write outside the workspace landed on the host: %q", m, res.Output)
			}
			if !strings.Contains(res.Output, "rc=1") {
				t.Fatalf("%s: write did not fail visibly: %q", m, res.Output)
			}
			// The operator's home is out of reach as well.
			home := filepath.Join(os.TempDir(), "staage-fake-home-"+string(m))
			os.MkdirAll(home, 0o700)
			defer os.RemoveAll(home)
			runIn(t, sb, ws, fmt.Sprintf("echo x > %q/.bashrc", home), time.Minute)
			if _, err := os.Stat(filepath.Join(home, ".bashrc")); err == nil {
				t.Fatalf("%s: wrote into a directory outside the workspace", m)
			}
		})
	}
}

func gitEnvScript() string {
	return "export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@e GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@e; "
}

func TestGitMvAcrossDirectories(t *testing.T) {
	for _, m := range modes {
		t.Run(string(m), func(t *testing.T) {
			sb := probe(t, m)
			ws := t.TempDir()
			// The operator's repository: product mode does not let a command
			// create one (see TestProductNotARepositoryStaysOne).
			if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
				t.Fatalf("git init: %v %s", err, out)
			}
			res := runIn(t, sb, ws, gitEnvScript()+
				"set -e; mkdir -p a/b c && echo x > a/b/f && git add -A && git commit -qm init && "+
				"git mv a/b/f c/f && git commit -qm mv && mv c a/moved && git status --porcelain && echo done", time.Minute)
			if res.ExitCode != 0 || !strings.Contains(res.Output, "done") {
				t.Fatalf("exit %d: %s", res.ExitCode, res.Output)
			}
			if _, err := os.Stat(filepath.Join(ws, "a", "moved", "f")); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestNetworkToLoopback(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	for _, m := range modes {
		t.Run(string(m), func(t *testing.T) {
			sb := probe(t, m)
			res := runIn(t, sb, t.TempDir(), fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && echo CONNECTED || echo REFUSED", port), time.Minute)
			connected := strings.Contains(res.Output, "CONNECTED")
			if m == Product && connected {
				t.Fatalf("product reached the host's loopback: %q", res.Output)
			}
			if m != Product && !connected {
				t.Fatalf("%s should have the network open: %q", m, res.Output)
			}
		})
	}
}

func TestProductProtectsGitAndStaage(t *testing.T) {
	sb := probe(t, Product)
	ws := t.TempDir()
	git := exec.Command("git", "init", "-q", ws)
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	os.RemoveAll(filepath.Join(ws, ".git", "hooks")) // missing, as some tools leave it
	attacks := []string{
		"mkdir -p .git/hooks; printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit",
		"echo '[core] fsmonitor = evil' >> .git/config",
		"mv .git .git-old && mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit",
		"mkdir -p .staage && echo '{}' > .staage/grants.json",
		"rm -rf .git/hooks; ln -s /tmp .git/hooks",
	}
	for _, a := range attacks {
		res := runIn(t, sb, ws, a, time.Minute)
		if res.ExitCode == 0 {
			t.Errorf("%q succeeded: %s", a, res.Output)
		}
	}
	for _, p := range []string{".git/hooks/pre-commit", ".staage/grants.json", ".git-old"} {
		if _, err := os.Lstat(filepath.Join(ws, p)); err == nil {
			t.Errorf("%s exists on the host", p)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, ".git", "config")); strings.Contains(string(b), "evil") {
		t.Errorf(".git/config was written: %s", b)
	}
	// Placeholders bwrap needed as mount points are gone after the run.
	for _, p := range []string{".staage", ".git/hooks"} {
		if _, err := os.Lstat(filepath.Join(ws, p)); err == nil {
			t.Errorf("placeholder %s left behind", p)
		}
	}
	// Ordinary work in the repository still works.
	res := runIn(t, sb, ws, gitEnvScript()+"echo a > a && git add a && git commit -qm a && git log --oneline | wc -l", time.Minute)
	if res.ExitCode != 0 || strings.TrimSpace(res.Output) != "1" {
		t.Fatalf("commit inside product: %d %s", res.ExitCode, res.Output)
	}
}

func TestProductNotARepositoryStaysOne(t *testing.T) {
	sb := probe(t, Product)
	ws := t.TempDir()
	res := runIn(t, sb, ws, "git init -q . && echo made", time.Minute)
	if strings.Contains(res.Output, "made") {
		t.Fatalf("git init succeeded in a non-repository workspace")
	}
	if _, err := os.Lstat(filepath.Join(ws, ".git")); err == nil {
		t.Fatalf(".git left on the host")
	}
}

func TestTimeoutKillsBackgroundedSleep(t *testing.T) {
	for i, m := range modes {
		t.Run(string(m), func(t *testing.T) {
			sb := probe(t, m)
			arg := fmt.Sprint(41000 + i)
			res := runIn(t, sb, t.TempDir(), "sleep "+arg+" & sleep "+arg+" & wait", 500*time.Millisecond)
			if !res.TimedOut {
				t.Fatalf("not timed out: %+v", res)
			}
			deadline := time.Now().Add(5 * time.Second)
			for alive("sleep", arg) {
				if time.Now().After(deadline) {
					t.Fatalf("%s: backgrounded sleep survived the timeout", m)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

func alive(argv ...string) bool {
	want := strings.Join(argv, "\x00") + "\x00"
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && string(b) == want {
			return true
		}
	}
	return false
}

func TestSecretsNeverInTheChildEnvironment(t *testing.T) {
	for _, m := range modes {
		t.Run(string(m), func(t *testing.T) {
			sb := probe(t, m)
			res := runIn(t, sb, t.TempDir(), "env", time.Minute)
			for _, bad := range []string{"sk-ant-secret-value", "MY_SERVICE_TOKEN"} {
				if strings.Contains(res.Output, bad) {
					t.Errorf("%s leaked into the environment", bad)
				}
			}
			if !strings.Contains(res.Output, "STAAGE_SANDBOX="+string(m)) {
				t.Errorf("mode not announced: %s", res.Output)
			}
			if m == Product && strings.Contains(res.Output, "PLAIN=kept") {
				t.Errorf("product passed a variable that is not on the allowlist")
			}
			if m != Product && !strings.Contains(res.Output, "PLAIN=kept") {
				t.Errorf("%s dropped an ordinary variable", m)
			}
		})
	}
}

func TestProbeAutoTakesStrongest(t *testing.T) {
	sb, err := Probe(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	_, perr := lookBwrap()
	if perr == nil && sb.Mode() != Product {
		t.Fatalf("bwrap is installed but auto chose %s: %s", sb.Mode(), sb.Describe())
	}
	if sb.Mode() != Product && sb.Reason() == "" {
		t.Fatalf("fallback without a reason: %s", sb.Describe())
	}
}

func TestProbeExplicitRefusesWhatItCannotHonour(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no bwrap on this PATH
	_, err := Probe(context.Background(), "product")
	var pe *ProbeError
	if !errors.As(err, &pe) {
		t.Fatalf("want a ProbeError, got %v", err)
	}
	for _, want := range []string{"bubblewrap", "--sandbox bench"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	sb, err := Probe(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if sb.Mode() == Product || !strings.Contains(sb.Describe(), "bubblewrap not installed") {
		t.Fatalf("auto without bwrap: %s", sb.Describe())
	}
	if _, err := Probe(context.Background(), "sandboxed"); err == nil {
		t.Fatal("unknown mode accepted")
	}
}

func TestZeroSandboxRefuses(t *testing.T) {
	_, err := Sandbox{}.Run(context.Background(), Exec{Workspace: t.TempDir(), Argv: []string{"/bin/true"}})
	var se *SetupError
	if !errors.As(err, &se) {
		t.Fatalf("zero sandbox ran a command: %v", err)
	}
}

func TestDescribeAndReport(t *testing.T) {
	for _, m := range modes {
		sb := probe(t, m)
		if !strings.HasPrefix(sb.Describe(), string(m)+" — ") {
			t.Errorf("describe: %q", sb.Describe())
		}
		r := sb.Report()
		switch m {
		case Bench:
			if !strings.Contains(r, "NETWORK IS OPEN") {
				t.Errorf("bench report hides the network: %s", r)
			}
		case Off:
			if !strings.Contains(r, "UNCONTAINED") {
				t.Errorf("off report: %s", r)
			}
		}
	}
}

func TestProductProtectsHooksPathInsideWorkspace(t *testing.T) {
	sb := probe(t, Product)
	ws := t.TempDir()
	for _, args := range [][]string{{"init", "-q", ws}, {"-C", ws, "config", "core.hooksPath", ".husky"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	res := runIn(t, sb, ws, "mkdir -p .husky && echo evil > .husky/pre-commit", time.Minute)
	if res.ExitCode == 0 {
		t.Fatalf("wrote into core.hooksPath: %s", res.Output)
	}
	if _, err := os.Stat(filepath.Join(ws, ".husky", "pre-commit")); err == nil {
		t.Fatal("hook planted on the host")
	}
}

func TestScrubAndAllowlist(t *testing.T) {
	console := []string{"ANTHROPIC_API_KEY=x", "GITHUB_TOKEN=y", "AWS_SECRET_ACCESS_KEY=z", "NPM_CONFIG__AUTH=q",
		"HARMLESS=sk-ant-api03-looks-like-a-key", "LD_PRELOAD=/evil.so", "BASH_ENV=/evil", "PATH=/usr/bin", "GOFLAGS=-mod=mod",
		"EDITOR=vim", "HOME=/root"}
	for _, env := range [][]string{productEnv(console, "/h", "/t"), benchEnv(console, "/h", "/t"), offEnv(console)} {
		joined := strings.Join(env, "\n")
		for _, bad := range []string{"ANTHROPIC_API_KEY", "GITHUB_TOKEN", "AWS_SECRET", "_AUTH", "sk-ant-"} {
			if strings.Contains(joined, bad) {
				t.Errorf("%s survived:\n%s", bad, joined)
			}
		}
		if !strings.Contains(joined, "PATH=/usr/bin") {
			t.Errorf("PATH lost:\n%s", joined)
		}
	}
	for _, env := range [][]string{productEnv(console, "/h", "/t"), benchEnv(console, "/h", "/t")} {
		joined := strings.Join(env, "\n")
		for _, bad := range []string{"LD_PRELOAD", "BASH_ENV", "HOME=/root"} {
			if strings.Contains(joined, bad) {
				t.Errorf("%s survived in a sandbox:\n%s", bad, joined)
			}
		}
	}
}

func TestProductHidesTheOperatorsHome(t *testing.T) {
	sb := probe(t, Product)
	// Outside /tmp, which product replaces anyway: the home must be hidden
	// by its own mount, not by accident.
	home, err := os.MkdirTemp("/var/tmp", "staage-home-")
	if err != nil {
		t.Skip(err)
	}
	defer os.RemoveAll(home)
	for p, c := range map[string]string{
		".ssh/id_ed25519":         "PRIVATE KEY",
		".config/staage/key":      "sk-ant-api03-secret",
		"go/bin/tool":             "#!/bin/sh\necho tool-ran\n",
		".cargo/credentials.toml": "token = \"cargo-secret\"",
		".cargo/bin/cargo-x":      "x",
		".gitconfig":              "[user]\n\tname = Operator Name\n\temail = op@example.com\n",
	} {
		os.MkdirAll(filepath.Join(home, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(home, p), []byte(c), 0o755)
	}
	ws := filepath.Join(home, "proj") // the workspace lives in the home, as usual
	os.Mkdir(ws, 0o755)
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	env := []string{"HOME=" + home, "PATH=" + filepath.Join(home, "go", "bin") + ":/usr/bin:/bin"}
	res, err := sb.Run(context.Background(), Exec{Workspace: ws, Env: env, Timeout: time.Minute, Argv: []string{"/bin/bash", "-c",
		fmt.Sprintf("cat %[1]s/.ssh/id_ed25519 %[1]s/.config/staage/key %[1]s/.cargo/credentials.toml; tool; "+
			"echo x > f && git add f && git commit -qm m && git log --format=%%an", home)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"PRIVATE KEY", "sk-ant", "cargo-secret"} {
		if strings.Contains(res.Output, secret) {
			t.Errorf("%s readable in product: %s", secret, res.Output)
		}
	}
	if !strings.Contains(res.Output, "tool-ran") {
		t.Errorf("a PATH entry under the home was hidden: %s", res.Output)
	}
	if !strings.Contains(res.Output, "Operator Name") {
		t.Errorf("the operator's git identity was lost: %s", res.Output)
	}
}

// setsid escapes a process group; product's pid namespace still catches it.
func TestProductKillsSetsidEscapees(t *testing.T) {
	sb := probe(t, Product)
	res := runIn(t, sb, t.TempDir(), "setsid sleep 41999 & setsid -f sleep 41998; sleep 60", 500*time.Millisecond)
	if !res.TimedOut {
		t.Fatalf("not timed out: %+v", res)
	}
	deadline := time.Now().Add(5 * time.Second)
	for alive("sleep", "41999") || alive("sleep", "41998") {
		if time.Now().After(deadline) {
			t.Fatal("a setsid'd process survived the product sandbox")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestStatusNamesTheFallback(t *testing.T) {
	if sb := probe(t, Product); sb.Status() != "product" {
		t.Fatalf("explicit product status %q", sb.Status())
	}
	t.Setenv("PATH", "/nonexistent")
	sb, err := Probe(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if got := sb.Status(); got != "bench — bubblewrap not installed" && !strings.HasPrefix(got, "off — ") {
		t.Fatalf("status %q", got)
	}
}

func TestProductMasksHostSockets(t *testing.T) {
	sb := probe(t, Product)
	res := runIn(t, sb, t.TempDir(), "ls -A /run | wc -l; find /run /tmp -type s | wc -l", time.Minute)
	if res.ExitCode != 0 || res.Output != "0\n0\n" {
		t.Fatalf("host sockets visible: %q", res.Output)
	}
}

// A helper that cannot restrict itself must not run the command.
func TestHelperFailureIsASetupError(t *testing.T) {
	for _, m := range []Mode{Product, Bench} {
		good := probe(t, m)
		bad := &state{mode: m, abi: 99, bwrap: good.st.bwrap, exe: good.st.exe, dir: good.st.dir,
			holds: map[string]int{}, hooks: map[string]hooksEntry{}} // ABI 99: no such preset, the helper refuses
		ws := t.TempDir()
		res, err := Sandbox{bad}.Run(context.Background(), Exec{Workspace: ws,
			Argv: []string{"/bin/bash", "-c", "touch ran"}, Env: testEnv(t), Timeout: time.Minute})
		var se *SetupError
		if !errors.As(err, &se) || !strings.Contains(se.Msg, "ABI 99") {
			t.Fatalf("%s: %v %+v", m, err, res)
		}
		if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
			t.Fatalf("%s: the command ran without its sandbox", m)
		}
	}
}

// /etc/profile resets PATH in a login shell; the private HOME's profile
// restores the console's, so the tools the operator has still resolve.
func TestLoginShellKeepsTheConsolePath(t *testing.T) {
	for _, m := range []Mode{Product, Bench} {
		t.Run(string(m), func(t *testing.T) {
			sb := probe(t, m)
			ws := t.TempDir()
			os.Mkdir(filepath.Join(ws, "bin"), 0o755)
			os.WriteFile(filepath.Join(ws, "bin", "mytool"), []byte("#!/bin/sh\necho mytool-ran\n"), 0o755)
			env := []string{"PATH=" + filepath.Join(ws, "bin") + ":/usr/bin:/bin", "HOME=" + t.TempDir()}
			res, err := sb.Run(context.Background(), Exec{Workspace: ws, Argv: []string{"/bin/bash", "-lc", "mytool"}, Env: env, Timeout: time.Minute})
			if err != nil || !strings.Contains(res.Output, "mytool-ran") {
				t.Fatalf("%v: %q", err, res.Output)
			}
			// A command cannot rewrite what the next command's login runs.
			runIn(t, sb, ws, "echo 'echo planted' >> ~/.bash_profile", time.Minute)
			res, _ = sb.Run(context.Background(), Exec{Workspace: ws, Argv: []string{"/bin/bash", "-lc", "true"}, Env: env, Timeout: time.Minute})
			if strings.Contains(res.Output, "planted") {
				t.Fatalf("a planted profile ran: %q", res.Output)
			}
		})
	}
}

// A binary that does not answer as the helper (HelperMain not wired) is a
// bug the probe names, not a reason to fall back quietly.
func TestProbeNamesAnUnwiredHelper(t *testing.T) {
	abi, err := landlockABI()
	if err != nil || abi < minABI {
		t.Skip("no landlock")
	}
	st := &state{mode: Bench, abi: min(abi, maxABI), exe: "/bin/echo", holds: map[string]int{}, hooks: map[string]hooksEntry{}}
	if err := st.makeDirs(); err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(st.dir)
	err = selfTest(context.Background(), Sandbox{st})
	if !errors.Is(err, errHelperMissing) {
		t.Fatalf("got %v", err)
	}
}

// Concurrent product commands share placeholders: none of them can create
// the protected paths, and none is left behind.
func TestProductConcurrentPlaceholders(t *testing.T) {
	sb := probe(t, Product)
	ws := t.TempDir()
	var wg sync.WaitGroup
	outs := make([]string, 4)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := sb.Run(context.Background(), Exec{Workspace: ws, Env: testEnv(t), Timeout: time.Minute,
				Argv: []string{"/bin/bash", "-c", "sleep 0.2; mkdir -p .staage/x .git/hooks && echo CREATED"}})
			if err != nil {
				outs[i] = err.Error()
				return
			}
			outs[i] = res.Output
		}()
	}
	wg.Wait()
	for _, o := range outs {
		if strings.Contains(o, "CREATED") {
			t.Errorf("a protected path was created: %q", o)
		}
	}
	for _, p := range []string{".staage", ".git"} {
		if _, err := os.Lstat(filepath.Join(ws, p)); err == nil {
			t.Errorf("%s left behind", p)
		}
	}
}
