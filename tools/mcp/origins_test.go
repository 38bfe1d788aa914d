package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"staage/tools"
)

// testServer is a server spec that runs this test binary as an MCP server.
func testServer(t testing.TB, name, mode string, env ...string) Server {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Under -race a binary sleeps a second at exit unless told not to.
	base := []string{serverModeEnv + "=" + mode, "GORACE=atexit_sleep_ms=0"}
	return Server{Name: name, Command: exe, Env: append(base, env...)}
}

// connect starts the servers and closes them when the test ends.
func connect(t *testing.T, opts Options, servers ...Server) *Origins {
	t.Helper()
	o, err := Connect(context.Background(), servers, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = o.Close() })
	return o
}

// toolset mints the names through the registry, as the boot does.
func toolset(t *testing.T, o *Origins) (*tools.Toolset, tools.Report) {
	t.Helper()
	return tools.NewToolset(o.Declarations())
}

// call binds raw arguments the way the loop does and runs the tool.
func call(t *testing.T, ts *tools.Toolset, name, args string) tools.Result {
	t.Helper()
	tool, ok := ts.Lookup(name)
	if !ok {
		t.Fatalf("%s is not offered; offered: %v", name, ts.Names())
	}
	c, ref := tool.Bind("id-1", "main", json.RawMessage(args))
	if ref != nil {
		return ref
	}
	return tool.Handler().Run(context.Background(), c)
}

func okPayload(t *testing.T, r tools.Result) Payload {
	t.Helper()
	ok, isOk := r.(tools.Ok)
	if !isOk {
		t.Fatalf("want Ok, got %#v", r)
	}
	return ok.Payload.(Payload)
}

func refusal(t *testing.T, r tools.Result, name tools.RefusalName) *tools.Refusal {
	t.Helper()
	ref, ok := r.(*tools.Refusal)
	if !ok || ref.Name != name {
		t.Fatalf("want refusal %s, got %#v", name, r)
	}
	return ref
}

func reportHas(t *testing.T, o *Origins, want ...string) {
	t.Helper()
	all := strings.Join(o.Report(), "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("report lacks %q:\n%s", w, all)
		}
	}
}

func TestToolsBecomeDeclarationsWithMintedNames(t *testing.T) {
	o := connect(t, Options{}, testServer(t, "notes", "basic"))
	for _, d := range o.Declarations() {
		if d.Origin != "notes" || d.Policy != tools.Required || d.Handler == nil {
			t.Errorf("declaration %+v", d)
		}
	}
	ts, rep := toolset(t, o)
	for _, want := range []string{"notes__echo", "notes__fail", "notes__lookup", "notes__mutate"} {
		if _, ok := ts.Lookup(want); !ok {
			t.Errorf("%s not offered (offered %v)", want, ts.Names())
		}
	}
	// dup-name and dup_name meet after normalization: neither is offered.
	for _, n := range []string{"notes__dup-name", "notes__dup_name"} {
		if _, ok := ts.Lookup(n); ok {
			t.Errorf("%s offered despite the collision", n)
		}
	}
	if !rep.Has(tools.NoteCollision) {
		t.Errorf("no collision note: %+v", rep.Notes)
	}
	// A schema with an external reference is not offered.
	if _, ok := ts.Lookup("notes__badref"); ok || !rep.Has(tools.NoteSchemaInvalid) {
		t.Errorf("notes__badref offered, or not reported: %+v", rep.Notes)
	}
	// A raw name with an escape sequence is folded by the host, called
	// by its raw name, and reported without the escape.
	if p := okPayload(t, call(t, ts, "notes__evil__2Jname", `{}`)); p.Text != "odd" {
		t.Errorf("odd name answered %q", p.Text)
	}
	for _, n := range rep.Notes {
		if strings.ContainsRune(n.Message, 0x1b) {
			t.Errorf("registry note carries ESC: %q", n.Message)
		}
	}
	for _, l := range o.Report() {
		if strings.ContainsRune(l, 0x1b) {
			t.Errorf("report line carries ESC: %q", l)
		}
	}
	reportHas(t, o, "mcp notes: 17 tools (offered as notes__<tool>")
}

func TestTwoServersWithTheSameToolNameAreBothOffered(t *testing.T) {
	o := connect(t, Options{}, testServer(t, "beta", "basic"), testServer(t, "alpha", "basic"))
	ts, _ := toolset(t, o)
	a, okA := ts.Lookup("alpha__echo")
	b, okB := ts.Lookup("beta__echo")
	if !okA || !okB {
		t.Fatalf("offered %v", ts.Names())
	}
	if a.Digest == b.Digest {
		t.Error("two origins share a digest")
	}
	// Each name reaches its own server.
	for _, n := range []string{"alpha__echo", "beta__echo"} {
		p := okPayload(t, call(t, ts, n, `{"text":"hi"}`))
		if p.Text != `{"text":"hi"}` {
			t.Errorf("%s answered %q", n, p.Text)
		}
	}
	// The boot report lists servers in name order, whatever the input order.
	rep := o.Report()
	if !strings.HasPrefix(rep[0], "mcp alpha:") {
		t.Errorf("report not in name order: %q", rep)
	}
}

func TestEffectComesOnlyFromTheOperator(t *testing.T) {
	srv := testServer(t, "notes", "basic")
	srv.Effects = map[string]tools.EffectClass{"echo": tools.EffectRead, "fail": "bogus", "nope": tools.EffectRead}
	o := connect(t, Options{}, srv)
	ts, _ := toolset(t, o)
	effect := func(n string) tools.EffectClass {
		tool, ok := ts.Lookup(n)
		if !ok {
			t.Fatalf("%s not offered", n)
		}
		return tool.Effect
	}
	if got := effect("notes__echo"); got != tools.EffectRead {
		t.Errorf("configured effect not honoured: %s", got)
	}
	// Undeclared, invalid, and hinted read-only: all irreversible.
	for _, n := range []string{"notes__fail", "notes__mutate", "notes__lookup"} {
		if got := effect(n); got != tools.EffectIrreversible {
			t.Errorf("%s effect %s, want irreversible", n, got)
		}
	}
	lookup, _ := ts.Lookup("notes__lookup")
	if !strings.Contains(lookup.Description, "[server hints, not verified: read-only, idempotent]") {
		t.Errorf("hints not shown: %q", lookup.Description)
	}
	reportHas(t, o,
		`irreversible, as [mcp.notes] effects does not name them: "badref", "big", "die", "dup-name", "dup_name", "env", "evil\x1b[2Jname", "fail", "flood", "leak", "lookup"`,
		`the server hints that "lookup" only read or are idempotent`,
		`effects names tools the server does not list: "nope"`)
}

func TestACallRoundTrips(t *testing.T) {
	o := connect(t, Options{}, testServer(t, "notes", "basic"))
	ts, _ := toolset(t, o)
	// Keys arrive in canonical order, exactly as validated.
	p := okPayload(t, call(t, ts, "notes__echo", `{ "text" : "a\u00e9b" }`))
	if p.Text != `{"text":"aéb"}` {
		t.Errorf("echo answered %q", p.Text)
	}
	// The schema is enforced before the server sees anything.
	refusal(t, call(t, ts, "notes__echo", `{"text":"x","extra":1}`), tools.ArgsInvalid)

	// Text is stripped, structured content is kept, an image is described.
	p = okPayload(t, call(t, ts, "notes__lookup", `{}`))
	if p.Text != "found it" || p.Stripped != 1 {
		t.Errorf("text %q stripped %d", p.Text, p.Stripped)
	}
	if string(p.Structured) != `{"hits":2}` {
		t.Errorf("structured %s", p.Structured)
	}
	if len(p.Omitted) != 1 || p.Omitted[0].Type != "image" || p.Omitted[0].Bytes != 7 {
		t.Errorf("omitted %+v", p.Omitted)
	}
	w := tools.ToWire(tools.Ok{Payload: p})
	if !w.OK || !strings.Contains(string(w.Payload), `"structured":{"hits":2}`) {
		t.Errorf("wire %s", w.Payload)
	}
}

func TestLargeResultsAreBoundedAndSaySo(t *testing.T) {
	o := connect(t, Options{MaxResultBytes: 64 << 10}, testServer(t, "notes", "basic"))
	ts, _ := toolset(t, o)
	p := okPayload(t, call(t, ts, "notes__big", `{}`))
	if !p.Truncated || len(p.Text) > 64<<10 || len(p.Text) < 60<<10 {
		t.Errorf("truncated %v, %d bytes", p.Truncated, len(p.Text))
	}
	if !utf8.ValidString(p.Text) || strings.ContainsRune(p.Text, utf8.RuneError) {
		t.Error("clipped inside a rune")
	}
	if p.Structured != nil || len(p.Omitted) != 1 || p.Omitted[0].Type != "structured" {
		t.Errorf("structured content over budget: %s %+v", p.Structured, p.Omitted)
	}
}

func TestErrorsAreTypedRefusals(t *testing.T) {
	o := connect(t, Options{}, testServer(t, "notes", "basic"))
	ts, _ := toolset(t, o)
	ref := refusal(t, call(t, ts, "notes__fail", `{}`), tools.MCPError)
	if !strings.Contains(ref.Message, "disk full") || strings.Contains(ref.Message, "\x1b") {
		t.Errorf("message %q", ref.Message)
	}
	if ref.Details["server"] != "notes" || ref.Details["tool"] != "fail" {
		t.Errorf("details %v", ref.Details)
	}
	ref = refusal(t, call(t, ts, "notes__rpcerr", `{}`), tools.MCPError)
	if !strings.Contains(ref.Message, "handler exploded") {
		t.Errorf("message %q", ref.Message)
	}
	// The server is still serving after both.
	okPayload(t, call(t, ts, "notes__echo", `{}`))
}

func TestAKilledServerIsUnavailableNotAHang(t *testing.T) {
	o := connect(t, Options{CallTimeout: 30 * time.Second}, testServer(t, "notes", "basic"))
	ts, _ := toolset(t, o)
	okPayload(t, call(t, ts, "notes__echo", `{}`))
	if err := syscall.Kill(o.servers[0].cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ref := refusal(t, call(t, ts, "notes__echo", `{}`), tools.MCPUnavailable)
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %s", d)
	}
	if !strings.Contains(ref.Message, "not running") {
		t.Errorf("message %q", ref.Message)
	}
	// And again, now that the exit is known.
	refusal(t, call(t, ts, "notes__echo", `{}`), tools.MCPUnavailable)
	waitReport(t, o, "mcp notes: the server exited")
}

func TestAServerThatDiesMidCall(t *testing.T) {
	o := connect(t, Options{CallTimeout: 30 * time.Second}, testServer(t, "notes", "basic"))
	ts, _ := toolset(t, o)
	refusal(t, call(t, ts, "notes__die", `{}`), tools.MCPUnavailable)
	waitReport(t, o, `the server exited (its stderr: "fatal: out of cheese")`)
	ref := refusal(t, call(t, ts, "notes__echo", `{}`), tools.MCPUnavailable)
	if !strings.Contains(ref.Message, `not running (its stderr: "fatal: out of cheese")`) {
		t.Errorf("message %q", ref.Message)
	}
}

func TestACallThatOutlivesItsTimeout(t *testing.T) {
	o := connect(t, Options{CallTimeout: 300 * time.Millisecond}, testServer(t, "notes", "basic"))
	ts, _ := toolset(t, o)
	ref := refusal(t, call(t, ts, "notes__sleep", `{}`), tools.MCPUnavailable)
	if !strings.Contains(ref.Message, "did not answer tools/call within 300ms") {
		t.Errorf("message %q", ref.Message)
	}
	// The operator's interrupt is a cancel, not a server problem.
	tool, _ := ts.Lookup("notes__sleep")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	refusal(t, tool.Handler().Run(ctx, tools.Call{Args: json.RawMessage(`{}`)}), tools.ToolCancelled)
}

func waitReport(t *testing.T, o *Origins, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(strings.Join(o.Report(), "\n"), want) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("report never said %q:\n%s", want, strings.Join(o.Report(), "\n"))
}

func TestASchemaChangedAfterBootIsRefused(t *testing.T) {
	for _, quiet := range []bool{false, true} {
		t.Run("quiet="+strconv.FormatBool(quiet), func(t *testing.T) {
			var env []string
			if quiet {
				env = append(env, "STAAGE_MCP_TEST_QUIET=1")
			}
			lines := make(chan string, 64)
			o := connect(t, Options{OnReport: func(l string) { lines <- l }}, testServer(t, "notes", "basic", env...))
			ts, _ := toolset(t, o)
			before, _ := ts.Lookup("notes__echo")
			okPayload(t, call(t, ts, "notes__echo", `{"text":"a"}`))
			okPayload(t, call(t, ts, "notes__mutate", `{}`))
			if !quiet {
				// list_changed arrives and is acted on before any call.
				select {
				case l := <-lines:
					if !strings.Contains(l, "changed the schema") && !strings.Contains(l, "now lists") {
						t.Errorf("first runtime line %q", l)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("no report after list_changed")
				}
			}
			ref := refusal(t, call(t, ts, "notes__echo", `{"text":"a"}`), tools.MCPUnavailable)
			if !strings.Contains(ref.Message, "changed the tool \"echo\" since staage started") || !strings.Contains(ref.Message, "must restart") {
				t.Errorf("message %q", ref.Message)
			}
			reportHas(t, o, `the server changed the schema of "echo" after boot`, `the server now lists "extra"`)
			// The descriptor offered is still the one pinned at boot.
			after, _ := ts.Lookup("notes__echo")
			if after.Digest != before.Digest {
				t.Error("the pinned digest moved")
			}
			// Other tools keep working.
			okPayload(t, call(t, ts, "notes__lookup", `{}`))
		})
	}
}

func TestADescriptionChangedAfterBootIsReported(t *testing.T) {
	o := connect(t, Options{}, testServer(t, "notes", "basic"))
	ts, _ := toolset(t, o)
	lookup, _ := ts.Lookup("notes__lookup")
	okPayload(t, call(t, ts, "notes__retitle", `{}`))
	// Same schema, same effect: the same tool, still callable.
	okPayload(t, call(t, ts, "notes__lookup", `{}`))
	waitReport(t, o, `the server changed the description of "lookup" after boot (`+short(lookup.DescriptionPrint)+" → ")
	n := 0
	for _, l := range o.Report() {
		if strings.Contains(l, `description of "lookup"`) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the change was reported %d times", n)
	}
}

func TestAServerThatNeverAnswersTimesOut(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	start := time.Now()
	o := connect(t, Options{ConnectTimeout: 400 * time.Millisecond},
		testServer(t, "mute", "silent", "STAAGE_MCP_TEST_PIDFILE="+pidfile),
		testServer(t, "notes", "basic"))
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("boot waited %s", d)
	}
	reportHas(t, o, "mcp mute: did not answer initialize within 400ms; no tools from it")
	ts, _ := toolset(t, o)
	for _, n := range ts.Names() {
		if strings.HasPrefix(n, "mute__") {
			t.Errorf("%s offered", n)
		}
	}
	if _, ok := ts.Lookup("notes__echo"); !ok {
		t.Error("the healthy server's tools are missing")
	}
	// The silent server was killed, not left behind.
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(b))
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("server %d still exists: %v", pid, err)
	}
}

func TestServersThatFailToStart(t *testing.T) {
	missing := Server{Name: "ghost", Command: "/nonexistent/mcp-server"}
	disabled := testServer(t, "off", "basic")
	disabled.Disabled = true
	o := connect(t, Options{ConnectTimeout: 5 * time.Second}, missing, testServer(t, "crashy", "crash"), disabled)
	if len(o.Declarations()) != 0 {
		t.Errorf("declarations from failed servers: %d", len(o.Declarations()))
	}
	reportHas(t, o,
		"mcp ghost: not started: ",
		`mcp crashy: failed at initialize: `, `(its stderr: "boom: GITHUB_TOKEN is not set"); no tools from it`,
		"mcp off: disabled in your config; not started")
	for _, l := range o.Report() {
		if strings.Contains(l, "\n") {
			t.Errorf("a report line spans lines: %q", l)
		}
	}
}

func TestConnectRefusesBadServerLists(t *testing.T) {
	for _, servers := range [][]Server{
		{{Name: "builtin", Command: "x"}},
		{{Name: "Bad", Command: "x"}},
		{{Name: "a", Command: "x"}, {Name: "a", Command: "y"}},
	} {
		if _, err := Connect(context.Background(), servers, Options{}); err == nil {
			t.Errorf("%+v accepted", servers)
		}
	}
	// No servers: nothing to do, nothing to say.
	o := connect(t, Options{})
	if len(o.Declarations()) != 0 || len(o.Report()) != 0 {
		t.Error("empty Connect said something")
	}
}

func TestAPoisonedDescriptionIsNeutralised(t *testing.T) {
	o := connect(t, Options{}, testServer(t, "notes", "stderr"))
	ts, _ := toolset(t, o)
	note, ok := ts.Lookup("notes__note")
	if !ok {
		t.Fatal("note not offered")
	}
	d := note.Description
	for _, bad := range []string{"\x1b", "\x07", "\u202e", "\u200b", "\u009b", "]52;", "[2J"} {
		if strings.Contains(d, bad) {
			t.Errorf("description keeps %q: %q", bad, d)
		}
	}
	// The text stays visible to the operator, with the removal said.
	if !strings.Contains(d, "ignore previous instructions") || !strings.Contains(d, "[staage removed 7 control or invisible characters") {
		t.Errorf("description %q", d)
	}
	reportHas(t, o, `tool "note": its description carried 7 control or invisible characters; removed`)
	for _, l := range o.Report() {
		if s, n := strip(l); n != 0 {
			t.Errorf("report line carries controls: %q", s)
		}
	}
}

func TestTheServerDoesNotGetTheConsolesKeys(t *testing.T) {
	console := []string{"PATH=" + os.Getenv("PATH"), "HOME=/home/op", "ANTHROPIC_API_KEY=sk-ant-abc", "OPENAI_API_KEY=sk-0123456789abcdef0123", "LANG=C.UTF-8"}
	srv := testServer(t, "notes", "basic", "GITHUB_TOKEN=ghp_configured", "LANG=en_GB.UTF-8")
	o := connect(t, Options{Env: console}, srv)
	ts, _ := toolset(t, o)
	got := strings.Fields(okPayload(t, call(t, ts, "notes__env", `{}`)).Text)
	for _, bad := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY"} {
		if slices.Contains(got, bad) {
			t.Errorf("the server got %s", bad)
		}
	}
	for _, want := range []string{"GITHUB_TOKEN", "HOME", "LANG", "PATH"} {
		if !slices.Contains(got, want) {
			t.Errorf("the server lacks %s: %v", want, got)
		}
	}
	if n := strings.Count(strings.Join(got, " "), "LANG"); n != 1 {
		t.Errorf("LANG %d times", n)
	}
}

func TestCloseStopsEveryServer(t *testing.T) {
	o := connect(t, Options{}, testServer(t, "a", "basic"), testServer(t, "b", "basic"))
	var pids []int
	for _, s := range o.servers {
		pids = append(pids, s.cmd.Process.Pid)
	}
	ts, _ := toolset(t, o)
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	_ = o.Close() // idempotent
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("server %d survived Close: %v", pid, err)
		}
	}
	refusal(t, call(t, ts, "a__echo", `{}`), tools.MCPUnavailable)
	for _, l := range o.Report() {
		if strings.Contains(l, "exited") {
			t.Errorf("Close reported as a crash: %q", l)
		}
	}
}

func TestAServerThatKeepsChangingCannotFloodTheReport(t *testing.T) {
	o := connect(t, Options{}, testServer(t, "notes", "basic"))
	ts, _ := toolset(t, o)
	okPayload(t, call(t, ts, "notes__flood", `{}`))
	// The call after the flood lists (and compares) once more.
	okPayload(t, call(t, ts, "notes__echo", `{}`))
	waitReport(t, o, "mcp notes: the server keeps changing its tools; further changes are not reported one by one")
	boot := 3 // the boot lines of the basic server (see the effects test)
	if n := len(o.Report()); n > boot+maxRuntimeLines+1+2 {
		t.Errorf("%d report lines:\n%s", n, strings.Join(o.Report(), "\n"))
	}
}

func TestACancelledBootStartsNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o, err := Connect(ctx, []Server{testServer(t, "notes", "basic")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if len(o.Declarations()) != 0 {
		t.Error("a cancelled boot declared tools")
	}
	reportHas(t, o, "mcp notes: not started: the boot was cancelled; no tools from it")
}

func TestConfiguredSecretsAreRedacted(t *testing.T) {
	const token = "ghp_s3cr3tTOKENvalue0123456789"
	o := connect(t, Options{},
		testServer(t, "notes", "basic", "GITHUB_TOKEN="+token),
		testServer(t, "broken", "crashleak", "GITHUB_TOKEN="+token))
	ts, _ := toolset(t, o)
	p := okPayload(t, call(t, ts, "notes__leak", `{}`))
	if p.Text != "token=[redacted]" || string(p.Structured) != `{"token":"[redacted]"}` {
		t.Errorf("payload %q %s", p.Text, p.Structured)
	}
	reportHas(t, o, `(its stderr: "401: token [redacted] was rejected")`)
	if strings.Contains(strings.Join(o.Report(), "\n"), token) {
		t.Error("the token reached the report")
	}
}
