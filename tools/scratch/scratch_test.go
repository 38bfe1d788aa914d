package scratch

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"staage/tools"
)

func tool(t *testing.T, dir string) *tools.Tool {
	t.Helper()
	ts, rep := tools.NewToolset(Declarations(dir))
	if len(rep.Notes) > 0 {
		t.Fatalf("report %+v", rep.Notes)
	}
	tl, ok := ts.Lookup("scratch_read")
	if !ok || tl.Policy != tools.Required || tl.Effect != tools.EffectRead {
		t.Fatalf("declaration %+v", tl)
	}
	return tl
}

func run(t *testing.T, tl *tools.Tool, args string) tools.Result {
	t.Helper()
	c, ref := tl.Bind("c", "main", json.RawMessage(args))
	if ref != nil {
		return ref
	}
	return tl.Handler().Run(context.Background(), c)
}

// fixture is a scratch dir with a file, a subdir, a link that stays inside
// and links that lead out; and a secret beside it.
func fixture(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "scratch")
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("one\ntwo\nthree\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "-rf"), []byte("dash\n"), 0o644)
	os.WriteFile(filepath.Join(base, "secret"), []byte("s3cret\n"), 0o600)
	os.Symlink("notes.txt", filepath.Join(dir, "inside-link"))
	os.Symlink("../secret", filepath.Join(dir, "outside-link"))
	os.Symlink("/etc", filepath.Join(dir, "sub", "etc"))
	os.Mkdir(filepath.Join(base, "scratch-evil"), 0o755)
	os.WriteFile(filepath.Join(base, "scratch-evil", "x"), []byte("evil\n"), 0o644)
	return dir
}

func okOutput(t *testing.T, r tools.Result) Output {
	t.Helper()
	ok, isOk := r.(tools.Ok)
	if !isOk {
		t.Fatalf("got %#v", r)
	}
	return ok.Payload.(Output)
}

func refusal(t *testing.T, r tools.Result, want tools.RefusalName) {
	t.Helper()
	ref, ok := r.(*tools.Refusal)
	if !ok || ref.Name != want {
		t.Fatalf("want %s, got %#v", want, r)
	}
}

func TestReadCommandsWork(t *testing.T) {
	tl := tool(t, fixture(t))
	cases := []struct{ args, want string }{
		{`{"command":"cat","args":["notes.txt"]}`, "one\ntwo\nthree\n"},
		{`{"command":"cat","args":["-n","inside-link"]}`, "     1\tone\n"},
		{`{"command":"head","args":["-n","1","notes.txt"]}`, "one\n"},
		{`{"command":"head","args":["-n1","notes.txt"]}`, "one\n"},
		{`{"command":"tail","args":["--lines=1","notes.txt"]}`, "three\n"},
		{`{"command":"wc","args":["-l","notes.txt"]}`, "3 ./notes.txt\n"},
		{`{"command":"ls","args":["-1a"]}`, "notes.txt\n"},
		{`{"command":"ls","args":["sub"]}`, "etc\n"},
		{`{"command":"stat","args":["-c","%s","notes.txt"]}`, "14\n"},
		{`{"command":"cat","args":["--","-rf"]}`, "dash\n"},
		{`{"command":"cat","args":["-rf"]}`, ""}, // -r is not a cat flag
	}
	for _, c := range cases {
		r := run(t, tl, c.args)
		if c.want == "" {
			refusal(t, r, tools.ScratchDenied)
			continue
		}
		out := okOutput(t, r)
		if !strings.Contains(out.Output, c.want) || out.ExitCode != 0 {
			t.Errorf("%s: exit %d, %q", c.args, out.ExitCode, out.Output)
		}
	}
	if out := okOutput(t, run(t, tl, `{"command":"file","args":["notes.txt"]}`)); !strings.Contains(out.Output, "text") {
		t.Errorf("file: %q", out.Output)
	}
}

func TestPathsStayInside(t *testing.T) {
	dir := fixture(t)
	tl := tool(t, dir)
	for _, args := range []string{
		`{"command":"cat","args":["../secret"]}`,
		`{"command":"cat","args":["outside-link"]}`,
		`{"command":"cat","args":["/etc/passwd"]}`,
		`{"command":"ls","args":["sub/etc"]}`,
		`{"command":"cat","args":["sub/../../secret"]}`,
		`{"command":"cat","args":["../scratch-evil/x"]}`,
		`{"command":"cat","args":["` + filepath.Join(filepath.Dir(dir), "scratch-evil", "x") + `"]}`,
		`{"command":"cat","args":["--","../secret"]}`,
	} {
		refusal(t, run(t, tl, args), tools.PathEscape)
	}
	// An absolute path inside the scratch dir is fine.
	okOutput(t, run(t, tl, `{"command":"cat","args":["`+filepath.Join(dir, "notes.txt")+`"]}`))
	refusal(t, run(t, tl, `{"command":"cat","args":["missing"]}`), tools.FileMissing)
}

func TestOnlySafeCommandsAndFlags(t *testing.T) {
	tl := tool(t, fixture(t))
	denied := []string{
		`{"command":"tail","args":["-f","notes.txt"]}`,
		`{"command":"tail","args":["--follow","notes.txt"]}`,
		`{"command":"tail","args":["-F","notes.txt"]}`,
		`{"command":"ls","args":["-L","sub"]}`,
		`{"command":"stat","args":["-L","notes.txt"]}`,
		`{"command":"wc","args":["--files0-from=notes.txt"]}`,
		`{"command":"file","args":["-m","notes.txt","notes.txt"]}`,
		`{"command":"file","args":["-z","notes.txt"]}`,
		`{"command":"file","args":["-C"]}`,
		`{"command":"file","args":["-f","notes.txt"]}`,
		`{"command":"head","args":["-n","$(id)","notes.txt"]}`,
		`{"command":"head","args":["-n"]}`,
		`{"command":"cat","args":["-"]}`,
		`{"command":"ls","args":["--color=always"]}`,
	}
	for _, a := range denied {
		refusal(t, run(t, tl, a), tools.ScratchDenied)
	}
	// Commands outside the six do not even bind: the schema's enum refuses.
	for _, a := range []string{`{"command":"rm","args":["notes.txt"]}`, `{"command":"cat; rm -rf /"}`, `{"command":"sh","args":["-c","id"]}`} {
		refusal(t, run(t, tl, a), tools.ArgsInvalid)
	}
	// A shell metacharacter is just a file name: no shell runs.
	refusal(t, run(t, tl, `{"command":"cat","args":["notes.txt; touch pwned"]}`), tools.FileMissing)
}

func TestNonZeroExitIsInformation(t *testing.T) {
	dir := fixture(t)
	os.Chmod(filepath.Join(dir, "notes.txt"), 0)
	if os.Getuid() == 0 {
		// root reads anything: make a directory cat fails on instead.
		out := okOutput(t, run(t, tool(t, dir), `{"command":"cat","args":["sub"]}`))
		if out.ExitCode == 0 || !strings.Contains(out.Output, "Is a directory") {
			t.Fatalf("%+v", out)
		}
		return
	}
	out := okOutput(t, run(t, tool(t, dir), `{"command":"cat","args":["notes.txt"]}`))
	if out.ExitCode == 0 {
		t.Fatalf("%+v", out)
	}
}

func TestUnavailableWithoutDir(t *testing.T) {
	refusal(t, run(t, tool(t, ""), `{"command":"ls"}`), tools.ScratchUnavailable)
}

func TestPreviewShowsTheArgv(t *testing.T) {
	dir := fixture(t)
	tl := tool(t, dir)
	c, _ := tl.Bind("c", "main", json.RawMessage(`{"command":"head","args":["-n5","-rf"]}`))
	_, err := tl.Handler().(tools.Previewer).Preview(context.Background(), c)
	if err == nil {
		t.Fatal("-r is not a head flag; preview should refuse")
	}
	c, _ = tl.Bind("c", "main", json.RawMessage(`{"command":"head","args":["-n5","--","-rf"]}`))
	pv, err := tl.Handler().(tools.Previewer).Preview(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if cp := pv.(tools.CommandPreview); cp.Command != "head -n 5 -- ./-rf" {
		t.Fatalf("preview %q", cp.Command)
	}
}
