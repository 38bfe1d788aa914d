package shell

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"staage/tools"
)

// injector tries every way a command could reach a terminal and push "Z"
// into its input queue with TIOCSTI: its controlling terminal, its own
// descriptors, and (outside off mode) the console's descriptors and every pty
// by name.
const injector = `perl -e '
for my $f (@ARGV) {
  my $t;
  next unless open($t, "+<", $f) || open($t, "<", $f);
  my $c = "Z";
  print "injected via $f\n" if ioctl($t, 0x5412, $c);
}
for my $fd (0, 1, 2) {
  open(my $t, "+<&=", $fd) or next;
  my $c = "Z";
  print "injected via fd $fd\n" if ioctl($t, 0x5412, $c);
}' /dev/tty /proc/self/fd/0 /proc/self/fd/1 /proc/self/fd/2`

const injectorEverywhere = injector + ` /proc/$PPID/fd/0 /proc/$PPID/fd/1 /dev/pts/*`

// TestNoKeystrokeInjection runs the bash tool in a process whose controlling
// terminal is a real pty and shows that the command cannot type into it.
func TestNoKeystrokeInjection(t *testing.T) {
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("perl is needed to issue TIOCSTI")
	}
	for _, m := range []Mode{Product, Bench, Off} {
		t.Run(string(m), func(t *testing.T) {
			probe(t, m) // fail or skip here, not in the child
			cmd := exec.Command(os.Args[0], "-test.run=^TestTIOCSTIChild$", "-test.v")
			cmd.Env = append(os.Environ(), "STAAGE_TIOCSTI_MODE="+string(m))
			ptmx, err := pty.Start(cmd) // Setsid + Setctty: the pty is the child's terminal
			if err != nil {
				t.Fatal(err)
			}
			defer ptmx.Close()
			verdict := make(chan string, 1)
			var log strings.Builder
			go func() {
				sc := bufio.NewScanner(ptmx)
				for sc.Scan() {
					line := sc.Text()
					log.WriteString(line + "\n")
					for _, k := range []string{"CONTROL-FAILED", "INJECTED", "CLEAN"} {
						if strings.Contains(line, "VERDICT "+k) {
							verdict <- line
							return
						}
					}
				}
				verdict <- "no verdict"
			}()
			select {
			case v := <-verdict:
				switch {
				case strings.Contains(v, "CONTROL-FAILED"):
					t.Skipf("this kernel refuses TIOCSTI even to the terminal's owner: %s", v)
				case !strings.Contains(v, "VERDICT CLEAN"):
					t.Fatalf("%s\n%s", v, log.String())
				}
			case <-time.After(2 * time.Minute):
				t.Fatal("child did not answer")
			}
			cmd.Wait()
		})
	}
}

// TestTIOCSTIChild is the body of the child; it does nothing in a normal run.
func TestTIOCSTIChild(t *testing.T) {
	mode := os.Getenv("STAAGE_TIOCSTI_MODE")
	if mode == "" {
		t.Skip("runs only as the child of TestNoKeystrokeInjection")
	}
	// Non-canonical, no echo: every queued byte counts in TIOCINQ at once.
	tio, err := unix.IoctlGetTermios(0, unix.TCGETS)
	if err != nil {
		fmt.Printf("VERDICT CONTROL-FAILED no terminal: %v\n", err)
		return
	}
	tio.Lflag &^= unix.ICANON | unix.ECHO
	if err := unix.IoctlSetTermios(0, unix.TCSETS, tio); err != nil {
		fmt.Printf("VERDICT CONTROL-FAILED termios: %v\n", err)
		return
	}
	// Control: the owner of the terminal can inject, and we can see it.
	// Without this the test below could pass for the wrong reason.
	if err := unix.IoctlSetPointerInt(0, unix.TIOCSTI, 'Q'); err != nil {
		fmt.Printf("VERDICT CONTROL-FAILED %v\n", err)
		return
	}
	if n, _ := unix.IoctlGetInt(0, unix.TIOCINQ); n == 0 {
		fmt.Println("VERDICT CONTROL-FAILED queue empty after injection")
		return
	}
	if err := unix.IoctlSetInt(0, unix.TCFLSH, unix.TCIFLUSH); err != nil {
		fmt.Printf("VERDICT CONTROL-FAILED flush: %v\n", err)
		return
	}
	// Control 2: the same injector, started the naive way (same session,
	// the terminal inherited), does get through. So a CLEAN verdict below
	// is the tool's doing, not a broken injector.
	naive := exec.Command("/bin/bash", "-c", injector)
	naive.Stdin, naive.Stdout, naive.Stderr = os.Stdin, os.Stdout, os.Stderr
	naive.Run()
	if n, _ := unix.IoctlGetInt(0, unix.TIOCINQ); n == 0 {
		fmt.Println("VERDICT CONTROL-FAILED the injector does not work here")
		return
	}
	unix.IoctlSetInt(0, unix.TCFLSH, unix.TCIFLUSH)

	script := injectorEverywhere
	if Mode(mode) == Off {
		// Off promises no containment: root can open the console's
		// terminal by name. What every mode promises is that the
		// command's own session has no way to it.
		script = injector
	}
	tool := bashTool(t, probe(t, Mode(mode)), t.TempDir())
	c, _ := tool.Bind("c", "main", []byte(fmt.Sprintf(`{"command":%q}`, script)))
	res := tool.Handler().Run(context.Background(), c)
	out := ""
	if ok, isOk := res.(tools.Ok); isOk {
		out = ok.Payload.(Output).Output
	} else if r, isRef := res.(*tools.Refusal); isRef {
		out = fmt.Sprint(r.Details["output"])
	}
	n, err := unix.IoctlGetInt(0, unix.TIOCINQ)
	switch {
	case err != nil:
		fmt.Printf("VERDICT INJECTED? cannot read queue: %v\n", err)
	case n > 0 || strings.Contains(out, "injected via"):
		fmt.Printf("VERDICT INJECTED %d bytes queued; command said %q\n", n, out)
	default:
		fmt.Printf("VERDICT CLEAN (%q)\n", out)
	}
}
