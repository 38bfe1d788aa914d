package skills_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"staage/tools"
	"staage/tools/skills"
)

func run(t *testing.T, ts *tools.Toolset, name, args string) tools.Result {
	t.Helper()
	tool, ok := ts.Lookup(name)
	if !ok {
		t.Fatalf("tool %s not in the toolset (%v)", name, ts.Names())
	}
	call, ref := tool.Bind("call-1", "main", json.RawMessage(args))
	if ref != nil {
		return ref
	}
	return tool.Handler().Run(context.Background(), call)
}

func card(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n# " + name + "\n\nBody of " + name + ".\n"
}

func write(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fixture lays out a workspace root and a user root with valid, shadowed,
// malformed and escaping cards.
func fixture(t *testing.T) (skills.Dirs, string) {
	t.Helper()
	base := t.TempDir()
	d := skills.Dirs{Workspace: filepath.Join(base, "ws", ".staage", "skills"), User: filepath.Join(base, "config", "staage", "skills")}
	secret := filepath.Join(base, "outside")
	write(t, filepath.Join(secret, "SKILL.md"), card("outside", "a card outside both roots"))
	write(t, filepath.Join(base, "secret.md"), card("leak", "should never be read"))

	write(t, filepath.Join(d.Workspace, "go-testing", "SKILL.md"), card("go-testing", "How this repo runs its Go tests."))
	write(t, filepath.Join(d.Workspace, "go-testing", "scripts", "run.sh"), "#!/bin/sh\n")
	write(t, filepath.Join(d.Workspace, "go-testing", "reference.md"), "ref\n")
	write(t, filepath.Join(d.Workspace, "release", "SKILL.md"),
		"---\nname: release\ndescription: >\n  Cut a release:\n  tag, changelog,\n  publish.\nlicense: MIT\nmetadata:\n  owner: team\n---\nsteps\n")
	write(t, filepath.Join(d.Workspace, "broken-yaml", "SKILL.md"), "---\nname: [unclosed\ndescription: x\n---\n")
	write(t, filepath.Join(d.Workspace, "no-front", "SKILL.md"), "# just markdown\n")
	write(t, filepath.Join(d.Workspace, "unclosed", "SKILL.md"), "---\nname: unclosed\ndescription: never closed\n")
	write(t, filepath.Join(d.Workspace, "mismatch", "SKILL.md"), card("other-name", "name differs from folder"))
	write(t, filepath.Join(d.Workspace, "no-desc", "SKILL.md"), "---\nname: no-desc\n---\n")
	write(t, filepath.Join(d.Workspace, "list-name", "SKILL.md"), "---\nname: [a, b]\ndescription: x\n---\n")
	write(t, filepath.Join(d.Workspace, "Bad_Name", "SKILL.md"), card("Bad_Name", "uppercase and underscore"))
	write(t, filepath.Join(d.Workspace, "escape", "SKILL.md"), "---\nname: escape\ndescription: \"control \\e[31m in description\"\n---\n")
	if err := os.MkdirAll(filepath.Join(d.Workspace, "empty-folder"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(d.Workspace, "loose-file.md"), "not a folder, ignored\n")
	// A folder link out of the root, and a SKILL.md link out of the root.
	if err := os.Symlink(secret, filepath.Join(d.Workspace, "outside")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(d.Workspace, "leak"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "secret.md"), filepath.Join(d.Workspace, "leak", "SKILL.md")); err != nil {
		t.Fatal(err)
	}

	write(t, filepath.Join(d.User, "go-testing", "SKILL.md"), card("go-testing", "The user's own Go testing card."))
	write(t, filepath.Join(d.User, "writing", "SKILL.md"), card("writing", "House style for prose."))
	return d, base
}

func newSet(t *testing.T, d skills.Dirs) *tools.Toolset {
	t.Helper()
	ts, rep := tools.NewToolset(skills.Declarations(d))
	if len(rep.Notes) != 0 {
		t.Fatalf("boot report %+v", rep.Notes)
	}
	for _, name := range []string{"skill_list", "skill_load"} {
		tool, _ := ts.Lookup(name)
		if tool.Policy != tools.Required || tool.Effect != tools.EffectRead {
			t.Fatalf("%s policy %s effect %s", name, tool.Policy, tool.Effect)
		}
	}
	return ts
}

func TestListSortedShadowedAndSkipped(t *testing.T) {
	d, _ := fixture(t)
	ts := newSet(t, d)
	ok, isOk := run(t, ts, "skill_list", `{}`).(tools.Ok)
	if !isOk {
		t.Fatal("skill_list refused")
	}
	p := ok.Payload.(skills.ListPayload)
	want := []string{
		"go-testing: How this repo runs its Go tests. [workspace, shadows the user card of the same name]",
		"release: Cut a release: tag, changelog, publish. [workspace]",
		"writing: House style for prose. [user]",
	}
	if !slices.Equal(p.Cards, want) {
		t.Fatalf("cards:\n%s\nwant:\n%s", strings.Join(p.Cards, "\n"), strings.Join(want, "\n"))
	}
	reasons := map[string]string{
		"workspace/broken-yaml:":  "not valid YAML",
		"workspace/no-front:":     "does not start with a --- front matter line",
		"workspace/unclosed:":     "not closed",
		"workspace/mismatch:":     `does not match its folder "mismatch"`,
		"workspace/no-desc:":      "has no description",
		"workspace/list-name:":    "name is not a string",
		"workspace/Bad_Name:":     "lowercase letters",
		"workspace/escape:":       "control or invisible",
		"workspace/empty-folder:": "no SKILL.md",
		"workspace/outside:":      "leaves the skills folder",
		"workspace/leak:":         "leaves the skills folder",
	}
	for prefix, reason := range reasons {
		found := false
		for _, s := range p.Skipped {
			if strings.HasPrefix(s, prefix) {
				found = true
				if !strings.Contains(s, reason) {
					t.Errorf("%s: reason %q lacks %q", prefix, s, reason)
				}
			}
		}
		if !found {
			t.Errorf("%s not listed as skipped in %q", prefix, p.Skipped)
		}
	}
	if len(p.Skipped) != len(reasons) {
		t.Errorf("skipped %d, want %d: %q", len(p.Skipped), len(reasons), p.Skipped)
	}
	if p.ScanCapped {
		t.Error("scan capped on a small fixture")
	}
}

func TestLoadWholeCard(t *testing.T) {
	d, _ := fixture(t)
	ts := newSet(t, d)
	ok, isOk := run(t, ts, "skill_load", `{"name":"go-testing"}`).(tools.Ok)
	if !isOk {
		t.Fatal("refused")
	}
	p := ok.Payload.(skills.LoadPayload)
	if p.Content != card("go-testing", "How this repo runs its Go tests.") || p.Source != skills.SourceWorkspace || p.Truncated {
		t.Fatalf("payload %+v", p)
	}
	if int64(p.Bytes) != p.TotalBytes {
		t.Fatalf("bytes %d total %d", p.Bytes, p.TotalBytes)
	}
	if !slices.Equal(p.Resources, []string{"reference.md", "scripts/"}) {
		t.Fatalf("resources %v", p.Resources)
	}
	ok = run(t, ts, "skill_load", `{"name":"writing"}`).(tools.Ok)
	if p := ok.Payload.(skills.LoadPayload); p.Source != skills.SourceUser || !strings.Contains(p.Content, "Body of writing.") {
		t.Fatalf("user card %+v", p)
	}
}

func TestLoadClipsAndSaysSo(t *testing.T) {
	base := t.TempDir()
	d := skills.Dirs{Workspace: base}
	body := card("big", "A large card.") + strings.Repeat("line of the big card\n", skills.MaxCardBytes/10)
	write(t, filepath.Join(base, "big", "SKILL.md"), body)
	ts := newSet(t, d)
	p := run(t, ts, "skill_load", `{"name":"big"}`).(tools.Ok).Payload.(skills.LoadPayload)
	if !p.Truncated || p.TotalBytes != int64(len(body)) || p.Bytes > skills.MaxCardBytes || !strings.HasSuffix(p.Content, "\n") {
		t.Fatalf("truncated %v total %d bytes %d", p.Truncated, p.TotalBytes, p.Bytes)
	}
	if !strings.HasPrefix(body, p.Content) {
		t.Fatal("clipped content is not a prefix of the card")
	}
}

func TestLoadUnknownAndTraversal(t *testing.T) {
	d, base := fixture(t)
	ts := newSet(t, d)
	cases := []struct{ name, wantMsg string }{
		{"go-testin", `did you mean go-testing`},
		{"../../secret", `no card named "../../secret"`},
		{"/etc/passwd", `no card named`},
		{"outside", `leaves the skills folder`},
		{"leak", `leaves the skills folder`},
		{"broken-yaml", `not usable`},
		{"mismatch", `not usable`},
		{"other-name", `no card named`},
		{"GO-TESTING", `no card named`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"name": c.name})
			ref, isRef := run(t, ts, "skill_load", string(args)).(*tools.Refusal)
			if !isRef || ref.Name != tools.SkillUnknown {
				t.Fatalf("want skill.unknown, got %#v", ref)
			}
			if !strings.Contains(ref.Message, c.wantMsg) || ref.Details["name"] != c.name {
				t.Fatalf("message %q details %v", ref.Message, ref.Details)
			}
			if strings.Contains(ref.Message, "should never be read") || strings.Contains(ref.Message, base) {
				t.Fatalf("refusal leaks outside content or paths: %q", ref.Message)
			}
		})
	}
	// Schema: a missing or empty name is args.invalid before anything is read.
	for _, args := range []string{`{}`, `{"name":""}`, `{"name":"x","path":"y"}`} {
		if ref, _ := run(t, ts, "skill_load", args).(*tools.Refusal); ref == nil || ref.Name != tools.ArgsInvalid {
			t.Errorf("%s: %#v", args, ref)
		}
	}
}

func TestMissingRootsAreEmpty(t *testing.T) {
	ts := newSet(t, skills.Dirs{Workspace: filepath.Join(t.TempDir(), "nope"), User: ""})
	p := run(t, ts, "skill_list", `{}`).(tools.Ok).Payload.(skills.ListPayload)
	if len(p.Cards) != 0 || len(p.Skipped) != 0 {
		t.Fatalf("%+v", p)
	}
	b, _ := json.Marshal(p)
	if string(b) != `{"cards":[]}` {
		t.Fatalf("wire %s", b)
	}
}

func TestScanCapped(t *testing.T) {
	base := t.TempDir()
	for i := range skills.MaxFolders + 2 {
		name := "card-" + strings.Repeat("a", i%3+1) + "-" + string(rune('a'+i%26)) + "-" + itoa(i)
		write(t, filepath.Join(base, name, "SKILL.md"), card(name, "numbered card"))
	}
	p := run(t, newSet(t, skills.Dirs{Workspace: base}), "skill_list", `{}`).(tools.Ok).Payload.(skills.ListPayload)
	if !p.ScanCapped || len(p.Cards) != skills.MaxFolders {
		t.Fatalf("capped %v cards %d", p.ScanCapped, len(p.Cards))
	}
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

func TestDefaultDirs(t *testing.T) {
	d := skills.DefaultDirs("/w/proj")
	if d.Workspace != filepath.FromSlash("/w/proj/.staage/skills") || !strings.HasSuffix(d.User, filepath.FromSlash("staage/skills")) {
		t.Fatalf("%+v", d)
	}
}

func TestHostileFrontMatter(t *testing.T) {
	base := t.TempDir()
	bomb := "---\nname: bomb\ndescription: x\na: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		bomb += n + ": &" + n + " [*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + "]\n"
		prev = n
	}
	bomb += "---\n"
	write(t, filepath.Join(base, "bomb", "SKILL.md"), bomb)
	write(t, filepath.Join(base, "long", "SKILL.md"), "---\nname: long\ndescription: x\npad: "+strings.Repeat("p", skills.MaxFrontMatterBytes)+"\n---\n")
	write(t, filepath.Join(base, "crlf", "SKILL.md"), "\uFEFF---\r\nname: crlf\r\ndescription: Windows line ends\r\n---\r\nbody\r\n")
	p := run(t, newSet(t, skills.Dirs{Workspace: base}), "skill_list", `{}`).(tools.Ok).Payload.(skills.ListPayload)
	if !slices.Equal(p.Cards, []string{"crlf: Windows line ends [workspace]"}) {
		t.Fatalf("cards %q", p.Cards)
	}
	joined := strings.Join(p.Skipped, "\n")
	if !strings.Contains(joined, "workspace/bomb: skipped, front matter is not valid YAML") ||
		!strings.Contains(joined, "workspace/long: skipped, front matter is not closed") {
		t.Fatalf("skipped %q", p.Skipped)
	}
}
