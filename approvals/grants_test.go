package approvals_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"staage/approvals"
	"staage/tools"
)

// workspace returns a fresh workspace and an operator key path outside it.
func workspace(t *testing.T) (ws, key string) {
	t.Helper()
	return t.TempDir(), filepath.Join(t.TempDir(), "config", "staage", "grants.key")
}

func openGrants(t *testing.T, ws, key string) *approvals.GrantFile {
	t.Helper()
	gf, err := approvals.OpenGrantFile(ws, key)
	if err != nil {
		t.Fatalf("OpenGrantFile: %v", err)
	}
	return gf
}

func grantsPath(ws string) string { return filepath.Join(ws, ".staage", "grants.json") }

type fileDoc struct {
	Version int              `json:"version"`
	Grants  []map[string]any `json:"grants"`
}

func readDoc(t *testing.T, ws string) fileDoc {
	t.Helper()
	b, err := os.ReadFile(grantsPath(ws))
	if err != nil {
		t.Fatal(err)
	}
	var d fileDoc
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("grants.json is not JSON: %v\n%s", err, b)
	}
	return d
}

func writeDoc(t *testing.T, ws string, d fileDoc) {
	t.Helper()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(grantsPath(ws), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// grantAlways approves one call "always" through a real gate.
func grantAlways(t *testing.T, gf *approvals.GrantFile, tool *tools.Tool, args string) {
	t.Helper()
	gate := approvals.NewGate(approvals.GateConfig{Approver: answer(always), Always: gf})
	out := gate.Check(context.Background(), pending(t, tool, args))
	wantRun(t, out, approvals.ScopeAlways)
}

func TestAlwaysGrantPersistsAcrossGates(t *testing.T) {
	ws, key := workspace(t)
	tool := required(t, "bash", tools.EffectIrreversible)
	grantAlways(t, openGrants(t, ws, key), tool, `{"cmd":"make"}`)

	doc := readDoc(t, ws)
	if doc.Version != approvals.GrantFileVersion || len(doc.Grants) != 1 {
		t.Fatalf("grants.json: %+v", doc)
	}
	if doc.Grants[0]["digest"] != tool.Digest.String() || doc.Grants[0]["tool"] != "bash" || doc.Grants[0]["mac"] == "" {
		t.Errorf("entry %+v", doc.Grants[0])
	}
	fi, err := os.Stat(key)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key file: %v %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(grantsPath(ws)); strings.Contains(string(b), strings.TrimSpace(mustRead(t, key))) {
		t.Error("the key is written into the workspace")
	}
	leftovers, _ := filepath.Glob(filepath.Join(ws, ".staage", ".staage-tmp-*"))
	if len(leftovers) != 0 {
		t.Errorf("temp files left: %v", leftovers)
	}

	// A new process: new GrantFile, new gate, nobody at the keyboard.
	gf := openGrants(t, ws, key)
	if len(gf.Problems()) != 0 || len(gf.Grants()) != 1 {
		t.Fatalf("reopened: grants %v problems %v", gf.Grants(), gf.Problems())
	}
	gate := approvals.NewGate(approvals.GateConfig{Always: gf})
	wantRun(t, gate.Check(context.Background(), pending(t, tool, `{"cmd":"other"}`)), approvals.ScopeAlways)
	child := pending(t, tool, `{"cmd":"x"}`)
	child.Child = true
	wantRun(t, gate.Check(context.Background(), child), approvals.ScopeAlways)
	// A changed tool of the same name is not covered.
	weaker := required(t, "bash", tools.EffectReversible)
	wantRefused(t, gate.Check(context.Background(), pending(t, weaker, `{"cmd":"x"}`)), tools.ApprovalDenied)

	// The workspace may be named relatively.
	t.Chdir(ws)
	rel := openGrants(t, ".", key)
	if len(rel.Grants()) != 1 {
		t.Errorf("relative workspace: %v %v", rel.Grants(), rel.Problems())
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestAddIsIdempotentAndKeepsOthers(t *testing.T) {
	ws, key := workspace(t)
	gf := openGrants(t, ws, key)
	a, b := required(t, "a", tools.EffectRead), required(t, "b", tools.EffectRead)
	for _, g := range []approvals.Grant{
		{Tool: "a", Digest: a.Digest}, {Tool: "a", Digest: a.Digest}, {Tool: "b", Digest: b.Digest, Prefix: "go test"},
	} {
		if err := gf.Add(g); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(readDoc(t, ws).Grants); n != 2 {
		t.Errorf("%d entries on disk, want 2", n)
	}
	if got := openGrants(t, ws, key).Grants(); len(got) != 2 || got[1].Prefix != "go test" {
		t.Errorf("reopened %+v", got)
	}
}

func TestForeignGrantsAreIgnoredAndReported(t *testing.T) {
	tool := required(t, "bash", tools.EffectIrreversible)
	other := required(t, "file_write", tools.EffectIrreversible)

	setup := func(t *testing.T) (ws, key string) {
		ws, key = workspace(t)
		gf := openGrants(t, ws, key)
		if err := gf.Add(approvals.Grant{Tool: "bash", Digest: tool.Digest}); err != nil {
			t.Fatal(err)
		}
		return ws, key
	}
	edits := map[string]func(t *testing.T, ws string, d *fileDoc){
		"digest swapped": func(t *testing.T, ws string, d *fileDoc) { d.Grants[0]["digest"] = other.Digest.String() },
		"tool renamed":   func(t *testing.T, ws string, d *fileDoc) { d.Grants[0]["tool"] = "file_write" },
		"prefix added":   func(t *testing.T, ws string, d *fileDoc) { d.Grants[0]["prefix"] = "rm" },
		"mac dropped":    func(t *testing.T, ws string, d *fileDoc) { delete(d.Grants[0], "mac") },
		"mac upper case": func(t *testing.T, ws string, d *fileDoc) {
			d.Grants[0]["mac"] = strings.ToUpper(d.Grants[0]["mac"].(string))
		},
		// The file is untrusted text that ends up in the boot report.
		"escape sequence in the name": func(t *testing.T, ws string, d *fileDoc) {
			d.Grants[0]["tool"] = "bash\x1b]0;pwned\x07\x1b[2J"
		},
		"entry added by hand": func(t *testing.T, ws string, d *fileDoc) {
			d.Grants = append(d.Grants, map[string]any{"tool": "file_write", "digest": other.Digest.String(), "mac": d.Grants[0]["mac"]})
		},
	}
	for name, edit := range edits {
		t.Run(name, func(t *testing.T) {
			ws, key := setup(t)
			d := readDoc(t, ws)
			edit(t, ws, &d)
			writeDoc(t, ws, d)
			gf := openGrants(t, ws, key)
			if len(gf.Problems()) == 0 {
				t.Error("a tampered entry was not reported")
			}
			for _, p := range gf.Problems() {
				if strings.ContainsAny(p, "\x1b\x07") {
					t.Errorf("a problem carries raw control characters: %q", p)
				}
			}
			gate := approvals.NewGate(approvals.GateConfig{Always: gf})
			for _, tl := range []*tools.Tool{tool, other} {
				out := gate.Check(context.Background(), pending(t, tl, `{"cmd":"x"}`))
				// Only an untouched original entry may still cover bash.
				if out.Approved && !(name == "entry added by hand" && tl == tool) {
					t.Errorf("%s ran on a tampered file: %+v", tl.Name, out)
				}
			}
		})
	}

	t.Run("another operator's key", func(t *testing.T) {
		ws, _ := setup(t)
		_, otherKey := workspace(t)
		gf := openGrants(t, ws, otherKey)
		if len(gf.Grants()) != 0 {
			t.Errorf("grants under another key: %v", gf.Grants())
		}
		if p := gf.Problems(); len(p) != 1 || !strings.Contains(p[0], "bash") || !strings.Contains(p[0], tool.Digest.Short()) {
			t.Errorf("problems %v", p)
		}
	})
	t.Run("copied to another workspace", func(t *testing.T) {
		ws, key := setup(t)
		ws2 := t.TempDir()
		if err := os.MkdirAll(filepath.Join(ws2, ".staage"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(grantsPath(ws2), []byte(mustRead(t, grantsPath(ws))), 0o644); err != nil {
			t.Fatal(err)
		}
		gf := openGrants(t, ws2, key)
		if len(gf.Grants()) != 0 || len(gf.Problems()) != 1 {
			t.Errorf("a grant travelled between workspaces: %v %v", gf.Grants(), gf.Problems())
		}
	})
}

func TestMalformedGrantFilesAreReportedNotFatal(t *testing.T) {
	tool := required(t, "bash", tools.EffectIrreversible)
	cases := map[string]func(t *testing.T, ws string){
		"not JSON":          writeRaw(`{"version":1,"grants":[`),
		"empty":             writeRaw(``),
		"null":              writeRaw(`null`),
		"wrong version":     writeRaw(`{"version":2,"grants":[]}`),
		"bad digest":        writeRaw(`{"version":1,"grants":[{"tool":"bash","digest":"sha256:zz","mac":"00"}]}`),
		"grants not a list": writeRaw(`{"version":1,"grants":{"tool":"bash"}}`),
		"a directory": func(t *testing.T, ws string) {
			if err := os.MkdirAll(grantsPath(ws), 0o755); err != nil {
				t.Fatal(err)
			}
		},
		"a symlink to /dev/zero": func(t *testing.T, ws string) {
			mkdirStaage(t, ws)
			if err := os.Symlink("/dev/zero", grantsPath(ws)); err != nil {
				t.Fatal(err)
			}
		},
		"a FIFO": func(t *testing.T, ws string) {
			mkdirStaage(t, ws)
			if err := syscall.Mkfifo(grantsPath(ws), 0o644); err != nil {
				t.Skip("mkfifo:", err)
			}
		},
		"too large": func(t *testing.T, ws string) {
			mkdirStaage(t, ws)
			big := `{"version":1,"grants":[],"pad":"` + strings.Repeat("x", 2<<20) + `"}`
			if err := os.WriteFile(grantsPath(ws), []byte(big), 0o644); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, plant := range cases {
		t.Run(name, func(t *testing.T) {
			ws, key := workspace(t)
			plant(t, ws)
			gf := openGrants(t, ws, key)
			if len(gf.Grants()) != 0 || len(gf.Problems()) == 0 {
				t.Fatalf("grants %v problems %v", gf.Grants(), gf.Problems())
			}
			if !strings.Contains(gf.Problems()[0], "grants.json") {
				t.Errorf("problem %q does not name the file", gf.Problems()[0])
			}
			// The gate still works, and an always-grant either replaces the
			// broken file or, if it cannot be written, holds for the session.
			gate := approvals.NewGate(approvals.GateConfig{Approver: answer(always), Always: gf})
			out := gate.Check(context.Background(), pending(t, tool, `{"cmd":"x"}`))
			if !out.Approved {
				t.Fatalf("%+v", out)
			}
			if out.Scope == approvals.ScopeAlways {
				if got := openGrants(t, ws, key); len(got.Grants()) != 1 || len(got.Problems()) != 0 {
					t.Errorf("rewritten file: %v %v", got.Grants(), got.Problems())
				}
			} else if out.Scope != approvals.ScopeSession || !strings.Contains(out.Note, "could not be saved") {
				t.Errorf("unsaved always-grant: %+v", out)
			}
		})
	}
}

func writeRaw(s string) func(t *testing.T, ws string) {
	return func(t *testing.T, ws string) {
		mkdirStaage(t, ws)
		if err := os.WriteFile(grantsPath(ws), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func mkdirStaage(t *testing.T, ws string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(ws, ".staage"), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestStaageIsAFile(t *testing.T) {
	ws, key := workspace(t)
	if err := os.WriteFile(filepath.Join(ws, ".staage"), []byte("not a dir"), 0o644); err != nil {
		t.Fatal(err)
	}
	gf := openGrants(t, ws, key) // reported, not fatal
	if len(gf.Problems()) != 1 {
		t.Errorf("problems %v", gf.Problems())
	}
	tool := required(t, "bash", tools.EffectIrreversible)
	gate := approvals.NewGate(approvals.GateConfig{Approver: answer(always, deny), Always: gf})
	out := gate.Check(context.Background(), pending(t, tool, `{"cmd":"x"}`))
	wantRun(t, out, approvals.ScopeSession)
	if !strings.Contains(out.Note, "could not be saved") {
		t.Errorf("note %q", out.Note)
	}
	// It still holds for the session.
	wantRun(t, gate.Check(context.Background(), pending(t, tool, `{"cmd":"y"}`)), approvals.ScopeSession)
}

func TestAlwaysWithoutAStoreHoldsForTheProcess(t *testing.T) {
	tool := required(t, "bash", tools.EffectIrreversible)
	ops := answer(always, deny)
	gate := approvals.NewGate(approvals.GateConfig{Approver: ops})
	wantRun(t, gate.Check(context.Background(), pending(t, tool, `{"cmd":"x"}`)), approvals.ScopeAlways)
	wantRun(t, gate.Check(context.Background(), pending(t, tool, `{"cmd":"y"}`)), approvals.ScopeSession)
	if ops.count() != 1 {
		t.Errorf("asked %d times", ops.count())
	}
}

func TestPrefixAlwaysGrantPersists(t *testing.T) {
	ws, key := workspace(t)
	tool := toolWith(t, tools.Declaration{RawName: "bash", Policy: tools.Required, Effect: tools.EffectIrreversible, Handler: prefixed{runHandler}})
	gate := approvals.NewGate(approvals.GateConfig{
		Approver: answer(approvals.Decision{Verdict: approvals.Approve, Scope: approvals.ScopeAlways, Prefix: "go test"}),
		Always:   openGrants(t, ws, key),
	})
	wantRun(t, gate.Check(context.Background(), pending(t, tool, `{"cmd":"go test ./..."}`)), approvals.ScopeAlways)

	fresh := approvals.NewGate(approvals.GateConfig{Always: openGrants(t, ws, key)})
	out := fresh.Check(context.Background(), pending(t, tool, `{"cmd":"go test -race ./tools"}`))
	wantRun(t, out, approvals.ScopeAlways)
	if out.Prefix != "go test" {
		t.Errorf("prefix %q", out.Prefix)
	}
	wantRefused(t, fresh.Check(context.Background(), pending(t, tool, `{"cmd":"go generate"}`)), tools.ApprovalDenied)
}

func TestGrantKey(t *testing.T) {
	ws, _ := workspace(t)
	dir := t.TempDir()
	for name, content := range map[string]string{
		"not hex":   "zz\n",
		"too short": "00ff\n",
		"empty":     "",
	} {
		t.Run(name, func(t *testing.T) {
			key := filepath.Join(dir, name)
			if err := os.WriteFile(key, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := approvals.OpenGrantFile(ws, key)
			if err == nil || !strings.Contains(err.Error(), key) {
				t.Errorf("a malformed key was used: %v", err)
			}
		})
	}
	// A key made once is reused: two opens agree.
	key := filepath.Join(dir, "sub", "k")
	a := openGrants(t, ws, key)
	first := mustRead(t, key)
	if err := a.Add(approvals.Grant{Tool: "x", Digest: tools.Digest{1}}); err != nil {
		t.Fatal(err)
	}
	if mustRead(t, key) != first || len(openGrants(t, ws, key).Grants()) != 1 {
		t.Error("the key changed between opens")
	}
	if fi, err := os.Stat(filepath.Dir(key)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("key directory mode %v %v", fi.Mode(), err)
	}
}

// TestConcurrentAlwaysGrants: lanes granting "always" at once lose nothing.
func TestConcurrentAlwaysGrants(t *testing.T) {
	ws, key := workspace(t)
	gf := openGrants(t, ws, key)
	gate := approvals.NewGate(approvals.GateConfig{Approver: answer(always), Always: gf})
	var wg sync.WaitGroup
	const n = 16
	var calls []approvals.Pending
	for i := range n {
		calls = append(calls, pending(t, required(t, fmt.Sprintf("t%02d", i), tools.EffectIrreversible), `{"cmd":"x"}`))
	}
	for i, p := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out := gate.Check(context.Background(), p); out.Scope != approvals.ScopeAlways {
				t.Errorf("t%02d: %+v", i, out)
			}
		}()
	}
	wg.Wait()
	got := openGrants(t, ws, key)
	if len(got.Grants()) != n || len(got.Problems()) != 0 {
		t.Errorf("%d grants on disk, want %d; problems %v", len(got.Grants()), n, got.Problems())
	}
}

// TestStaageSymlinkIsNotFollowed: a repository (or a sandboxed command) can
// plant .staage as a link out of the workspace; the console's own,
// unsandboxed writer must not write through it, and nothing is read there.
func TestStaageSymlinkIsNotFollowed(t *testing.T) {
	ws, key := workspace(t)
	outside := t.TempDir()
	tool := required(t, "bash", tools.EffectIrreversible)
	// A grants file that would verify, waiting outside the workspace.
	real := openGrants(t, ws, key)
	if err := real.Add(approvals.Grant{Tool: "bash", Digest: tool.Digest}); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(ws, ".staage"), filepath.Join(outside, "planted")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "planted"), filepath.Join(ws, ".staage")); err != nil {
		t.Fatal(err)
	}
	gf := openGrants(t, ws, key)
	if len(gf.Grants()) != 0 || len(gf.Problems()) != 1 || !strings.Contains(gf.Problems()[0], "link") {
		t.Errorf("read through a linked .staage: grants %v problems %v", gf.Grants(), gf.Problems())
	}
	before := mustRead(t, filepath.Join(outside, "planted", "grants.json"))
	gate := approvals.NewGate(approvals.GateConfig{Approver: answer(always), Always: gf})
	out := gate.Check(context.Background(), pending(t, required(t, "other", tools.EffectIrreversible), `{"cmd":"x"}`))
	wantRun(t, out, approvals.ScopeSession)
	if !strings.Contains(out.Note, "could not be saved") {
		t.Errorf("note %q", out.Note)
	}
	if after := mustRead(t, filepath.Join(outside, "planted", "grants.json")); after != before {
		t.Error("the grant was written through the link, outside the workspace")
	}
	// grants.json and the lock file were made by the first Add, while
	// .staage was still a real directory; nothing may have been added since.
	entries, _ := os.ReadDir(filepath.Join(outside, "planted"))
	if len(entries) != 2 {
		t.Errorf("files written outside the workspace: %v", entries)
	}
}
