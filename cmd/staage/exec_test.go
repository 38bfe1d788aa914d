package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const sampleGo = "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n"

func digestOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(h[:])
}

// execScript writes a script that reads main.go, edits it with the digest
// it read, tries a stale edit, and updates the plan and the desk.
func execScript(t *testing.T, dir string) string {
	t.Helper()
	d := digestOf(sampleGo)
	resp := []map[string]any{
		{"text": "Planning.", "tool_calls": []map[string]any{{"id": "p1", "name": "plan", "input": map[string]any{
			"steps": []map[string]string{{"title": "read main.go", "status": "in_progress"}, {"title": "edit", "status": "pending"}}}}}},
		{"tool_calls": []map[string]any{{"id": "r1", "name": "file_read", "input": map[string]any{"path": "main.go"}}}},
		{"tool_calls": []map[string]any{{"id": "e1", "name": "file_edit", "input": map[string]any{
			"path": "main.go", "digest": d, "old": `println("hello")`, "new": `println("hello, staage")`}}}},
		{"tool_calls": []map[string]any{{"id": "e2", "name": "file_edit", "input": map[string]any{
			"path": "main.go", "digest": d, "old": "func main", "new": "func Main"}}}},
		{"tool_calls": []map[string]any{{"id": "d1", "name": "desk", "input": map[string]any{"action": "write", "page": "# notes\nedited main.go"}}}},
		{"text": "Done."},
	}
	b, err := json.Marshal(map[string]any{"responses": resp})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "script.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func runStaage(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(staageBinary(t), args...)
	cmd.Env = env
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

func events(t *testing.T, out string) []map[string]any {
	t.Helper()
	var evs []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("stdout line is not JSON: %q", sc.Text())
		}
		evs = append(evs, m)
	}
	return evs
}

func byID(evs []map[string]any, typ, id string) map[string]any {
	for _, e := range evs {
		if e["type"] == typ && e["id"] == id {
			return e
		}
	}
	return nil
}

func TestExecDrivesReadEditStalePlanDesk(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "main.go"), []byte(sampleGo), 0o644); err != nil {
		t.Fatal(err)
	}
	script := execScript(t, t.TempDir())
	out, stderr, code := runStaage(t, testEnv(t), "exec", "--workspace", ws, "--script", script,
		"--json", "--auto", "read,reversible", "--sandbox", "off", "make it greet staage")
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s\nstdout: %s", code, stderr, out)
	}
	evs := events(t, out)
	hex64 := regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

	read := byID(evs, "tool_call", "r1")
	if read == nil || read["tool"] != "file_read" || read["origin"] != "builtin" || read["policy"] != "required" ||
		read["effect"] != "read" || !hex64.MatchString(read["digest"].(string)) || read["lane"] != "main" {
		t.Fatalf("file_read tool_call: %v", read)
	}
	if a := byID(evs, "approval", "r1"); a == nil || a["decision"] != "approved" || a["scope"] != "auto" {
		t.Fatalf("file_read approval: %v", a)
	}
	if a := byID(evs, "approval", "p1"); a == nil || a["scope"] != "never" {
		t.Fatalf("plan approval: %v", a)
	}
	res := byID(evs, "tool_result", "r1")
	if res == nil || res["ok"] != true || !strings.Contains(mustJSON(res["payload"]), digestOf(sampleGo)) {
		t.Fatalf("file_read result: %v", res)
	}
	edit := byID(evs, "tool_result", "e1")
	if edit == nil || edit["ok"] != true || !strings.Contains(mustJSON(edit["payload"]), `+\tprintln(\"hello, staage\")`) {
		t.Fatalf("file_edit result has no diff: %v", edit)
	}
	stale := byID(evs, "tool_result", "e2")
	if stale == nil || stale["ok"] != false || stale["refusal"] != "file.stale" || stale["message"] == "" {
		t.Fatalf("stale edit: %v", stale)
	}
	var plan, desk, done map[string]any
	for _, e := range evs {
		switch e["type"] {
		case "plan":
			plan = e
		case "desk":
			desk = e
		case "turn_done":
			done = e
		}
	}
	if plan == nil || len(plan["steps"].([]any)) != 2 {
		t.Fatalf("plan event: %v", plan)
	}
	if desk == nil || !strings.Contains(desk["page"].(string), "edited main.go") {
		t.Fatalf("desk event: %v", desk)
	}
	if done == nil || done["stop"] != "end_turn" {
		t.Fatalf("turn_done: %v", done)
	}
	got, _ := os.ReadFile(filepath.Join(ws, "main.go"))
	if !strings.Contains(string(got), `println("hello, staage")`) || strings.Contains(string(got), "func Main") {
		t.Fatalf("workspace file:\n%s", got)
	}
}

func TestExecWithoutGrantsDeniesRequired(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "main.go"), []byte(sampleGo), 0o644)
	script := execScript(t, t.TempDir())
	out, stderr, code := runStaage(t, testEnv(t), "exec", "--workspace", ws, "--script", script, "--json", "--sandbox", "off", "go")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	evs := events(t, out)
	if r := byID(evs, "tool_result", "r1"); r["refusal"] != "approval.denied" {
		t.Fatalf("file_read without a grant: %v", r)
	}
	if r := byID(evs, "tool_result", "p1"); r["ok"] != true {
		t.Fatalf("plan (never) must run: %v", r)
	}
	got, _ := os.ReadFile(filepath.Join(ws, "main.go"))
	if string(got) != sampleGo {
		t.Fatal("a denied edit changed the file")
	}
}

func TestExecRefusesBadInputWithOneLine(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("{\n  \"responses\": [\n    {\"text\": \"x\",}\n  ]\n}\n"), 0o644)
	good := filepath.Join(dir, "good.json")
	os.WriteFile(good, []byte(`{"responses":[{"text":"hi"}]}`), 0o644)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"script syntax", []string{"exec", "--workspace", dir, "--script", bad, "go"}, "line 3"},
		{"missing script", []string{"exec", "--workspace", dir, "--script", filepath.Join(dir, "nope.json"), "go"}, "no such file"},
		{"auto class", []string{"exec", "--workspace", dir, "--script", good, "--auto", "reed", "go"}, "reed"},
		{"no prompt", []string{"exec", "--workspace", dir}, "needs a prompt"},
		{"no model", []string{"exec", "--workspace", dir, "go"}, "no model is configured"},
		{"sandbox", []string{"exec", "--workspace", dir, "--script", good, "--sandbox", "chroot", "go"}, "chroot"},
		{"worktrees without delegate", []string{"exec", "--workspace", dir, "--script", good, "--worktrees", t.TempDir(), "go"}, "--delegate"},
		{"workspace missing", []string{"exec", "--workspace", filepath.Join(dir, "nope"), "--script", good, "go"}, "nope"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, stderr, code := runStaage(t, testEnv(t), c.args...)
			if code == 0 {
				t.Fatalf("exit 0; stderr %q", stderr)
			}
			if !strings.Contains(stderr, c.want) {
				t.Fatalf("stderr %q does not say %q", stderr, c.want)
			}
		})
	}
}

func TestToolsListsTheElevenWithDigests(t *testing.T) {
	out, stderr, code := runStaage(t, testEnv(t), "tools", "--json", "--workspace", t.TempDir(), "--sandbox", "off")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Tools []struct {
			Name, Origin, Policy, Effect, Digest string
		}
		Report []struct{ Kind, Message string }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	want := []string{"bash", "desk", "file_edit", "file_find", "file_read", "file_search", "file_write", "plan", "scratch_read", "skill_list", "skill_load"}
	var names []string
	for _, tl := range doc.Tools {
		names = append(names, tl.Name)
		if !regexp.MustCompile(`^sha256:[0-9a-f]{64}$`).MatchString(tl.Digest) || tl.Origin != "builtin" {
			t.Errorf("%s: digest %q origin %q", tl.Name, tl.Digest, tl.Origin)
		}
	}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("tools %v, want %v", names, want)
	}
	var sawSandbox bool
	for _, n := range doc.Report {
		if strings.Contains(n.Message, "sandbox off") {
			sawSandbox = true
		}
	}
	if !sawSandbox {
		t.Fatalf("the boot report does not state the sandbox: %+v", doc.Report)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestBareResumeOpensThePicker(t *testing.T) {
	cases := []struct {
		in   []string
		rest string
		pick bool
	}{
		{[]string{"--resume"}, "", true},
		{[]string{"--resume", "--demo"}, "--demo", true},
		{[]string{"--resume", "abc"}, "--resume abc", false},
		{[]string{"--demo", "-resume"}, "--demo", true},
		{[]string{"--resume=abc"}, "--resume=abc", false},
	}
	for _, c := range cases {
		rest, pick := takeBareResume(c.in)
		if strings.Join(rest, " ") != c.rest || pick != c.pick {
			t.Errorf("%v → %v %v", c.in, rest, pick)
		}
	}
}

func TestExecTextOutputIsReadableAndInert(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "main.go"), []byte(sampleGo), 0o644)
	script := writeScript(t, []map[string]any{
		{"text": "Reading\x1b]52;c;cHduZWQ=\x07 now\x1b[2J.", "tool_calls": []map[string]any{
			{"id": "r1", "name": "file_read", "input": map[string]any{"path": "main.go"}}}},
		{"text": "All \u202edone\u202c."},
	})
	out, stderr, code := runStaage(t, testEnv(t), "exec", "--workspace", ws, "--script", script, "--sandbox", "off", "read it")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.ContainsAny(out+stderr, "\x1b\x07\u202e") {
		t.Fatalf("control sequences reached the terminal: %q", out)
	}
	for _, want := range []string{"Reading", "→ file_read", "approval.denied", "All", "— end_turn"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr, "sandbox:") {
		t.Errorf("stderr does not state the sandbox: %s", stderr)
	}
}
