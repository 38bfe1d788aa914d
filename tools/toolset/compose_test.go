package toolset

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"staage/tools"
	"staage/tools/delegate"
	"staage/tools/rails"
	"staage/tools/shell/sandbox"
	"staage/tools/workspace"
)

type noChildren struct{}

func (noChildren) RunChild(ctx context.Context, spec delegate.ChildSpec) (delegate.Envelope, error) {
	return delegate.Envelope{Status: "done", Summary: "nothing"}, nil
}

func baseOptions(t *testing.T) Options {
	t.Helper()
	dir := t.TempDir()
	// delegation needs a git checkout for worktrees
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.Probe(context.Background(), "off")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return Options{Workspace: ws, Sandbox: sb}
}

func names(t *testing.T, o Options) ([]string, tools.Report) {
	t.Helper()
	ts, rep, err := Compose(o)
	if err != nil {
		t.Fatal(err)
	}
	return ts.Names(), rep
}

func TestShippedBootOffersTheEleven(t *testing.T) {
	got, rep := names(t, baseOptions(t))
	if !slices.Equal(got, AlwaysPresent()) {
		t.Fatalf("got %v\nwant %v", got, AlwaysPresent())
	}
	for _, want := range []string{"sandbox off", "task is not offered", "rail not offered"} {
		found := false
		for _, n := range rep.Notes {
			found = found || strings.Contains(n.Message, want)
		}
		if !found {
			t.Errorf("boot report lacks %q: %+v", want, rep.Notes)
		}
	}
}

func TestDelegationAndWorktreesAddTaskThenApplyChange(t *testing.T) {
	o := baseOptions(t)
	o.Delegation, o.Children = true, noChildren{}
	got, _ := names(t, o)
	if !slices.Contains(got, "task") || slices.Contains(got, "apply_change") {
		t.Fatalf("delegation without worktrees: %v", got)
	}
	o.WorktreeRoot = t.TempDir()
	got, _ = names(t, o)
	if !slices.Contains(got, "task") || !slices.Contains(got, "apply_change") {
		t.Fatalf("delegation with worktrees: %v", got)
	}
	o.Children = nil
	if _, _, err := Compose(o); err == nil {
		t.Fatal("delegation without a child runner composed")
	}
}

func TestRailsOnlyWithCredentialsAndRequireRailsRefuses(t *testing.T) {
	o := baseOptions(t)
	o.RequireRails = true
	if _, _, err := Compose(o); err == nil || !strings.Contains(err.Error(), rails.EnvBankURL) {
		t.Fatalf("--require-rails without credentials: %v", err)
	}
	o.Rails = rails.Config{Bank: rails.Endpoint{URL: "http://127.0.0.1:1", Token: "t"}, Research: rails.Endpoint{URL: "http://127.0.0.1:1", Token: "t"}}
	o.Delegation, o.Children, o.WorktreeRoot = true, noChildren{}, t.TempDir()
	got, _ := names(t, o)
	for _, r := range []string{"bank_search", "bank_get", "librarian", "research"} {
		if !slices.Contains(got, r) {
			t.Fatalf("%s missing: %v", r, got)
		}
	}
	if len(got) != MaxBuiltin {
		t.Fatalf("the full boot offers %d names, the spec's ceiling is %d: %v", len(got), MaxBuiltin, got)
	}
}

func TestDevCheckReplacesBash(t *testing.T) {
	o := baseOptions(t)
	o.DevCheck = true
	got, _ := names(t, o)
	if slices.Contains(got, "bash") || !slices.Contains(got, "dev_check") {
		t.Fatalf("--dev-check: %v", got)
	}
}

func TestExtraOriginsAreMintedAndCollisionsFailClosed(t *testing.T) {
	o := baseOptions(t)
	h := tools.HandlerFunc(func(ctx context.Context, c tools.Call) tools.Result { return tools.Ok{} })
	o.Extra = []tools.Declaration{
		{Origin: "alpha", RawName: "search", Policy: tools.Required, Effect: tools.EffectRead, Handler: h},
		{Origin: "beta", RawName: "search", Policy: tools.Required, Effect: tools.EffectRead, Handler: h},
		{Origin: "gamma", RawName: "find-a", Policy: tools.Required, Effect: tools.EffectRead, Handler: h},
		{Origin: "gamma", RawName: "find_a", Policy: tools.Required, Effect: tools.EffectRead, Handler: h},
		{Origin: "gamma", RawName: "vague", Handler: h},
	}
	got, rep := names(t, o)
	if !slices.Contains(got, "alpha__search") || !slices.Contains(got, "beta__search") {
		t.Fatalf("origins not minted: %v", got)
	}
	if slices.Contains(got, "gamma__find-a") || slices.Contains(got, "gamma__find_a") || !rep.Has(tools.NoteCollision) {
		t.Fatalf("collision not failed closed: %v", got)
	}
	ts, _, _ := Compose(o)
	v, ok := ts.Lookup("gamma__vague")
	if !ok || v.Effect != tools.EffectIrreversible || v.Policy != tools.Required || !rep.Has(tools.NoteEffectDefaulted) {
		t.Fatalf("undeclared effect did not fail closed: %+v", v)
	}
}

func TestComposeIsDeterministic(t *testing.T) {
	o := baseOptions(t)
	a, _, _ := Compose(o)
	b, _, _ := Compose(o)
	da, db := a.Descriptors(), b.Descriptors()
	for i := range da {
		if da[i].Digest != db[i].Digest || da[i].Name != db[i].Name {
			t.Fatalf("descriptor %d differs", i)
		}
	}
}
