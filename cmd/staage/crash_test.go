package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"staage/agent"
	"staage/agent/journal"
	"staage/tools"
)

// plantedKey is put in the subprocess environment and written into the
// workspace by the script: it must never reach a journal.
const plantedKey = "sk-ant-api03-CRASHTEST-planted-0123456789abcdef"

const crashSteps = 8

func version(i int) string { return strings.Repeat(fmt.Sprintf("version %d\n", i), 200) }

// crashScript overwrites f.txt once per step (so a kill lands before,
// during or after an atomic write), updates the plan now and then, and runs
// one slow bash call so some kills land while a tool is running.
func crashScript(t *testing.T, dir string) string {
	t.Helper()
	var resp []map[string]any
	for i := 0; i < crashSteps; i++ {
		calls := []map[string]any{{"id": fmt.Sprintf("w%d", i), "name": "file_write",
			"input": map[string]any{"path": "f.txt", "content": version(i), "overwrite": true}}}
		if i%4 == 0 {
			calls = append(calls, map[string]any{"id": fmt.Sprintf("p%d", i), "name": "plan",
				"input": map[string]any{"steps": []map[string]string{{"title": fmt.Sprintf("step %d", i), "status": "in_progress"}}}})
		}
		if i == crashSteps/2 {
			calls = append(calls, map[string]any{"id": "slow", "name": "bash", "input": map[string]any{"command": "sleep 0.1"}},
				map[string]any{"id": "key", "name": "file_write", "input": map[string]any{"path": "key.txt", "content": "KEY=" + plantedKey + "\n", "overwrite": true}})
		}
		resp = append(resp, map[string]any{"text": fmt.Sprintf("Writing version %d of the file now.", i), "tool_calls": calls})
	}
	resp = append(resp, map[string]any{"text": "Done."})
	b, _ := json.Marshal(map[string]any{"responses": resp})
	p := filepath.Join(dir, "crash.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

type crashRig struct {
	bin, script string
	// resume is a script with nothing left to play: the resumed turn
	// ends at once instead of replaying the rest of the session.
	resume string
}

func (c crashRig) cmd(env []string, ws string, extra ...string) *exec.Cmd {
	script := c.script
	if len(extra) > 0 && extra[0] == "--continue" {
		script = c.resume
	}
	args := append([]string{"exec", "--script", script, "--json", "--sandbox", "off",
		"--auto", "read,idempotent-write,reversible,irreversible", "--workspace", ws}, extra...)
	cmd := exec.Command(c.bin, args...)
	cmd.Env = append(env, "ANTHROPIC_API_KEY="+plantedKey)
	return cmd
}

// TestCrashAtRandomPointsThenResume kills `staage exec` with SIGKILL at 50
// random points of a scripted session, each in its own workspace and state
// dir, and checks what a crash must leave: a journal that reads, every
// event the process had made durable (all events that reached stdout, which
// the journal sees first), f.txt either the old or the new content, no key
// in the journal, and a session that `--continue` resumes without re-running
// the interrupted call.
func TestCrashAtRandomPointsThenResume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary 100 times")
	}
	dir := t.TempDir()
	built := time.Now()
	rig := crashRig{bin: staageBinary(t), script: crashScript(t, dir), resume: filepath.Join(dir, "resume.json")}
	t.Logf("binary ready after %v", time.Since(built))
	began := time.Now()
	defer func() { t.Logf("50 kills and resumes took %v", time.Since(began)) }()
	if err := os.WriteFile(rig.resume, []byte(`{"responses":[{"text":"Resumed."}]}`), 0o644); err != nil {
		t.Fatal(err)
	}

	// One clean run sets the time scale for the kill points: when the
	// first event appears (the session exists) and when the run ends.
	ws, env := t.TempDir(), testEnv(t)
	clean := rig.cmd(env, ws, "go")
	fe := &firstLine{at: make(chan time.Time, 1)}
	clean.Stdout = fe
	start := time.Now()
	if err := clean.Run(); err != nil {
		t.Fatalf("clean run: %v", err)
	}
	full := time.Since(start)
	first := (<-fe.at).Sub(start)
	if got, _ := os.ReadFile(filepath.Join(ws, "f.txt")); string(got) != version(crashSteps-1) {
		t.Fatal("the clean run did not write the last version")
	}

	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	t.Logf("first event after %v, full run %v; kill points drawn with seed %d", first, full, seed)
	// One kill in ten lands during boot (timed from the start); the others
	// while the session runs, timed from the process's own first event, so
	// a slow boot on a loaded machine does not push them all into boot.
	const runs = 50
	points := make([]killPoint, runs)
	for i := range points {
		if i%10 == 0 {
			points[i] = killPoint{delay: time.Duration(rng.Int64N(int64(first) + 1))}
		} else {
			points[i] = killPoint{afterFirst: true, delay: time.Duration(rng.Int64N(int64(full-first) + 1))}
		}
	}

	var mu sync.Mutex
	tally := map[string]int{}
	sem := make(chan struct{}, 4) // the runs wait on fsync and sleep more than on the CPU
	var wg sync.WaitGroup
	for i, d := range points {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			kind, err := crashOnce(rig, testEnv(t), t.TempDir(), d)
			mu.Lock()
			defer mu.Unlock()
			tally[kind]++
			if err != nil {
				t.Errorf("run %d (kill %v): %v", i, d, err)
			}
		}()
	}
	wg.Wait()
	t.Logf("outcomes: %v", tally)
}

// killPoint is when a run is killed: delay after the start, or after the
// first event reached stdout.
type killPoint struct {
	afterFirst bool
	delay      time.Duration
}

func (k killPoint) String() string {
	if k.afterFirst {
		return fmt.Sprintf("%v after the first event", k.delay)
	}
	return fmt.Sprintf("%v after start", k.delay)
}

// crashOnce runs one kill and resume and says what kind of point it hit.
func crashOnce(rig crashRig, env []string, ws string, at killPoint) (string, error) {
	stateDir := filepath.Join(envValue(env, "XDG_STATE_HOME"), "staage", "sessions")
	cmd := rig.cmd(env, ws, "go")
	out := &watchBuffer{first: make(chan struct{})}
	cmd.Stdout = out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	exited := make(chan struct{})
	go func() {
		if at.afterFirst {
			select {
			case <-out.first:
			case <-exited:
				return
			}
		}
		select {
		case <-time.After(at.delay):
			_ = cmd.Process.Signal(syscall.SIGKILL)
		case <-exited:
		}
	}()
	_ = cmd.Wait()
	close(exited)

	kind := "killed"
	if cmd.ProcessState.Success() {
		kind = "finished"
	}
	seen := stdoutEvents(out.bytes())

	// The file being written is the old or the new content, never a mix.
	if b, err := os.ReadFile(filepath.Join(ws, "f.txt")); err == nil {
		ok := false
		for i := 0; i < crashSteps; i++ {
			ok = ok || string(b) == version(i)
		}
		if !ok {
			return kind, fmt.Errorf("f.txt is neither an old nor a new version (%d bytes)", len(b))
		}
	}

	list, err := journal.List(stateDir)
	if err != nil {
		return kind, err
	}
	if len(list) == 0 {
		if len(seen) > 0 {
			return kind, fmt.Errorf("no journal, but %d events reached stdout", len(seen))
		}
		// Killed before the session existed: there is nothing to resume,
		// and staage says so.
		out, err := rig.cmd(env, ws, "--continue", "again").CombinedOutput()
		if err == nil || !strings.Contains(string(out), "no session found") {
			return "before journal", fmt.Errorf("--continue without a session: %v\n%s", err, out)
		}
		return "before journal", nil
	}
	if len(list) != 1 {
		return kind, fmt.Errorf("%d sessions after one run", len(list))
	}
	raw, _ := os.ReadFile(list[0].Path)
	if bytes.Contains(raw, []byte(plantedKey)) {
		return kind, fmt.Errorf("the planted key is in the journal")
	}
	r, err := journal.Read(list[0].Path)
	if err != nil {
		return kind, err
	}
	for _, p := range r.Problems {
		if !strings.Contains(p, "torn last line") {
			return kind, fmt.Errorf("journal problem after a kill: %s", p)
		}
	}
	if err := durablePrefix(r.Events, seen); err != nil {
		return kind, err
	}
	started := map[string]bool{}
	for _, p := range r.Unanswered {
		if p.Started {
			started[p.ID] = true
			kind = "mid-tool"
		}
	}

	// Resume: it continues the conversation, answers a cut-off call as
	// interrupted and never runs it again.
	resumeCmd := rig.cmd(env, ws, "--continue", "carry on")
	var rout, rerr bytes.Buffer
	resumeCmd.Stdout, resumeCmd.Stderr = &rout, &rerr
	if err := resumeCmd.Run(); err != nil {
		return kind, fmt.Errorf("resume: %v\n%s", err, rerr.String())
	}
	after, err := journal.Read(list[0].Path)
	if err != nil {
		return kind, err
	}
	if len(after.Problems) != 0 || len(after.Unanswered) != 0 {
		return kind, fmt.Errorf("after resume: problems %v, unanswered %v", after.Problems, after.Unanswered)
	}
	restarted := 0
	interrupted := 0
	for _, e := range after.Events[len(r.Events):] {
		switch v := e.(type) {
		case agent.ToolStarted:
			if started[v.ID] {
				restarted++
			}
		case agent.ToolResult:
			if started[v.ID] && v.Refusal == tools.ToolInterrupted {
				interrupted++
			}
		}
	}
	if restarted != 0 || interrupted != len(started) {
		return kind, fmt.Errorf("interrupted calls %v: %d re-run, %d answered as interrupted", started, restarted, interrupted)
	}
	last := after.Events[len(after.Events)-1]
	if td, ok := last.(agent.TurnDone); !ok || td.Stop != agent.StopEndTurn {
		return kind, fmt.Errorf("resumed turn did not finish: last event %#v", last)
	}
	if !bytes.Contains(rout.Bytes(), []byte(`"text":"carry on"`)) {
		return kind, fmt.Errorf("resumed run did not take the new prompt")
	}
	if left, _ := filepath.Glob(filepath.Join(ws, journal.TempPrefix+"*")); len(left) != 0 {
		return kind, fmt.Errorf("temp files left after resume: %v", left)
	}
	return kind, nil
}

// firstLine notes when the first output arrives.
type firstLine struct {
	at   chan time.Time
	seen bool
}

func (f *firstLine) Write(p []byte) (int, error) {
	if !f.seen {
		f.seen = true
		f.at <- time.Now()
	}
	return len(p), nil
}

// watchBuffer keeps a subprocess's stdout and closes first when the first
// bytes arrive.
type watchBuffer struct {
	syncBuffer
	once  sync.Once
	first chan struct{}
}

func (w *watchBuffer) Write(p []byte) (int, error) {
	n, err := w.syncBuffer.Write(p)
	w.once.Do(func() { close(w.first) })
	return n, err
}

// stdoutEvents parses the --json lines the process printed, skipping a line
// cut by the kill.
func stdoutEvents(b []byte) [][]byte {
	var out [][]byte
	for {
		nl := bytes.IndexByte(b, '\n')
		if nl < 0 {
			return out
		}
		out = append(out, b[:nl])
		b = b[nl+1:]
	}
}

// durablePrefix checks that every non-delta event printed on stdout is in
// the journal, in order: the journal is published to before stdout, and
// decisions and results are fsynced before the loop goes on, so nothing the
// process showed can be missing. The journal may hold one event more (the
// kill fell between the two sinks). Streamed text is coalesced in the
// journal, so it is compared per lane as a whole: the journal's text is a
// prefix of what was printed.
func durablePrefix(journaled []agent.Event, printed [][]byte) error {
	var j, p []string
	jText, pText := map[string]string{}, map[string]string{}
	for _, e := range journaled {
		b, _ := agent.EncodeEvent(e)
		if d, ok := e.(agent.TextDelta); ok {
			jText[d.Lane] += d.Text
			continue
		}
		j = append(j, string(b))
	}
	for _, line := range printed {
		s := strings.ReplaceAll(string(line), plantedKey, "[redacted]")
		if bytes.HasPrefix(line, []byte(`{"type":"text"`)) {
			e, err := agent.DecodeEvent(line)
			if err != nil {
				return err
			}
			d := e.(agent.TextDelta)
			pText[d.Lane] += strings.ReplaceAll(d.Text, plantedKey, "[redacted]")
			continue
		}
		p = append(p, s)
	}
	if len(j) < len(p) || len(j) > len(p)+1 {
		return fmt.Errorf("journal holds %d events, stdout showed %d", len(j), len(p))
	}
	for i := range p {
		if j[i] != p[i] {
			return fmt.Errorf("event %d differs:\njournal %s\n stdout %s", i, j[i], p[i])
		}
	}
	for lane, text := range jText {
		if !strings.HasPrefix(pText[lane], text) {
			return fmt.Errorf("journaled text of lane %s is not what was streamed", lane)
		}
	}
	return nil
}
