// Command console measures terminal consoles the way an operator meets
// them: each command is started in a pseudo-terminal (120×40) whose output
// a virtual terminal draws, and the tool reports the time from exec to the
// first frame (the first moment the screen shows at least -min non-blank
// cells) and the resident memory of the process tree after -idle seconds
// of doing nothing. It prints one Markdown table row per command.
//
//	go run ./bench/console -runs 5 -- 'staage --demo' 'crush' 'codex'
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"
)

func main() {
	runs := flag.Int("runs", 5, "runs per command")
	minCells := flag.Int("min", 40, "non-blank cells that make a first frame")
	idle := flag.Duration("idle", 3*time.Second, "idle time before memory is read")
	timeout := flag.Duration("timeout", 30*time.Second, "give up on a command after this long")
	flag.Parse()
	fmt.Println("| command | first frame (median of runs) | min | max | idle RSS (MiB, median) |")
	fmt.Println("|---|---|---|---|---|")
	for _, c := range flag.Args() {
		var frames []time.Duration
		var rss []float64
		var failure string
		for i := 0; i < *runs; i++ {
			f, r, err := measure(c, *minCells, *idle, *timeout)
			if err != nil {
				failure = err.Error()
				break
			}
			frames = append(frames, f)
			rss = append(rss, r)
		}
		if failure != "" {
			fmt.Printf("| `%s` | failed: %s | | | |\n", c, failure)
			continue
		}
		sort.Slice(frames, func(i, j int) bool { return frames[i] < frames[j] })
		sort.Float64s(rss)
		fmt.Printf("| `%s` | %s | %s | %s | %.1f |\n", c, ms(frames[len(frames)/2]), ms(frames[0]), ms(frames[len(frames)-1]), rss[len(rss)/2])
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }

func measure(command string, minCells int, idle, timeout time.Duration) (time.Duration, float64, error) {
	cmd := exec.Command("/bin/sh", "-c", "exec "+command)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color", "COLORTERM=truecolor")
	emu := vt.NewSafeEmulator(120, 40)
	start := time.Now()
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		return 0, 0, err
	}
	defer func() {
		if cmd.Process != nil {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Process.Kill()
		}
		ptmx.Close()
		cmd.Wait()
	}()
	go io.Copy(emu, ptmx)
	go io.Copy(ptmx, emu)
	var first time.Duration
	for {
		if nonBlank(ansi.Strip(emu.Render())) >= minCells {
			first = time.Since(start)
			break
		}
		if time.Since(start) > timeout {
			return 0, 0, fmt.Errorf("no frame in %v", timeout)
		}
		time.Sleep(2 * time.Millisecond)
	}
	time.Sleep(idle)
	return first, treeRSS(cmd.Process.Pid), nil
}

func nonBlank(s string) int {
	n := 0
	for _, r := range s {
		if r != ' ' && r != '\n' {
			n++
		}
	}
	return n
}

// treeRSS sums VmRSS (MiB) of pid and its descendants.
func treeRSS(pid int) float64 {
	children := map[int][]int{}
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		id, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		children[ppid] = append(children[ppid], id)
	}
	total := 0.0
	var walk func(int)
	walk = func(p int) {
		total += rss(p)
		for _, c := range children[p] {
			walk(c)
		}
	}
	walk(pid)
	return total
}

func rss(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			f := strings.Fields(l)
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}
