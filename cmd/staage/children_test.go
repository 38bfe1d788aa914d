package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitRepo makes a real repository with main.go committed.
func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q")
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(sampleGo), 0o644); err != nil {
		t.Fatal(err)
	}
	run("add", "main.go")
	run("commit", "-qm", "init")
	return dir
}

func writeScript(t *testing.T, responses []map[string]any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"responses": responses})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func call(id, name string, input map[string]any) map[string]any {
	return map[string]any{"tool_calls": []map[string]any{{"id": id, "name": name, "input": input}}}
}

// A write child edits its own worktree; the main checkout changes only when
// apply_change lands the diff, and the worktree is gone afterwards.
func TestWriteChildLandsThroughApplyChange(t *testing.T) {
	repo := gitRepo(t)
	trees := t.TempDir()
	script := writeScript(t, []map[string]any{
		call("t1", "task", map[string]any{"objective": "Change the greeting in main.go to say hello staage", "mode": "write"}),
		call("w1", "file_edit", map[string]any{"path": "main.go", "digest": digestOf(sampleGo),
			"old": `println("hello")`, "new": `println("hello staage")`}),
		{"text": `{"status":"done","summary":"greeting changed","findings":["one line"],"files":["main.go"]}`},
		call("a1", "apply_change", map[string]any{"change": "change-1"}),
		{"text": "Landed."},
	})
	out, stderr, code := runStaage(t, testEnv(t), "exec", "--workspace", repo, "--script", script, "--json",
		"--delegate", "--worktrees", trees, "--auto", "read,irreversible", "--sandbox", "off", "fix the greeting")
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s\nstdout: %s", code, stderr, out)
	}
	evs := events(t, out)
	var started, finished, childEdit map[string]any
	for _, e := range evs {
		switch {
		case e["type"] == "child_started":
			started = e
		case e["type"] == "child_finished":
			finished = e
		case e["type"] == "tool_call" && e["id"] == "w1":
			childEdit = e
		}
	}
	if started == nil || started["child"] != "write-1" || started["mode"] != "write" || started["lane"] != "main" {
		t.Fatalf("child_started: %v", started)
	}
	if childEdit == nil || childEdit["lane"] != "write-1" {
		t.Fatalf("the child's edit did not run in its lane: %v", childEdit)
	}
	if r := byID(evs, "approval", "w1"); r["scope"] != "auto" {
		t.Fatalf("the write child's edit was not approved by its worktree gate: %v", r)
	}
	if finished == nil || finished["status"] != "done" || !strings.Contains(mustJSON(finished["envelope"]), "change-1") {
		t.Fatalf("child_finished: %v", finished)
	}
	task := byID(evs, "tool_result", "t1")
	if task["ok"] != true || !strings.Contains(mustJSON(task["payload"]), `"change":"change-1"`) {
		t.Fatalf("task result: %v", task)
	}
	if r := byID(evs, "tool_result", "a1"); r["ok"] != true {
		t.Fatalf("apply_change: %v", r)
	}
	got, _ := os.ReadFile(filepath.Join(repo, "main.go"))
	if !strings.Contains(string(got), `println("hello staage")`) {
		t.Fatalf("the main checkout did not get the change:\n%s", got)
	}
	if entries, _ := os.ReadDir(trees); len(entries) != 0 {
		t.Fatalf("the worktree was not removed: %v", entries)
	}
}

// A scout reads with a standing grant, is refused what needs a human, and
// cannot reach tools outside the read half.
func TestScoutChildIsNarrowAndUnattended(t *testing.T) {
	repo := gitRepo(t)
	script := writeScript(t, []map[string]any{
		call("t1", "task", map[string]any{"objective": "Find where main.go prints its greeting", "mode": "scout"}),
		{"tool_calls": []map[string]any{
			{"id": "s1", "name": "file_read", "input": map[string]any{"path": "main.go"}},
			{"id": "s2", "name": "bash", "input": map[string]any{"command": "echo hi > x"}},
			{"id": "s3", "name": "file_search", "input": map[string]any{"pattern": "println"}},
		}},
		{"text": "It prints in main()."},
		{"text": "The scout says main() prints it."},
	})
	// --auto read covers file_read; file_search is REQUIRED too, but here
	// only reads are granted, so both reads run. Nothing else is offered.
	out, stderr, code := runStaage(t, testEnv(t), "exec", "--workspace", repo, "--script", script, "--json",
		"--delegate", "--auto", "read", "--sandbox", "off", "where is the greeting?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	evs := events(t, out)
	if r := byID(evs, "tool_result", "s1"); r["ok"] != true {
		t.Fatalf("scout read: %v", r)
	}
	if r := byID(evs, "tool_result", "s2"); r["refusal"] != "tool.off_profile" {
		t.Fatalf("scout bash: %v", r)
	}
	task := byID(evs, "tool_result", "t1")
	if task["ok"] != true || !strings.Contains(mustJSON(task["payload"]), "It prints in main()") {
		t.Fatalf("task: %v", task)
	}
	if _, err := os.Stat(filepath.Join(repo, "x")); err == nil {
		t.Fatal("the scout ran a command")
	}

	// Without a standing grant the same read is refused at once: nobody
	// is attached to a child to ask.
	out, _, code = runStaage(t, testEnv(t), "exec", "--workspace", repo, "--script", script, "--json",
		"--delegate", "--sandbox", "off", "where is the greeting?")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if r := byID(events(t, out), "tool_result", "s1"); r["refusal"] != "approval.child_unattended" {
		t.Fatalf("unattended child read: %v", r)
	}
}
