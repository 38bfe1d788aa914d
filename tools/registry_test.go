package tools_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"staage/tools"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

var okHandler = tools.HandlerFunc(func(ctx context.Context, call tools.Call) tools.Result {
	return tools.Ok{Payload: map[string]string{"args": string(call.Args)}}
})

const objSchema = `{"type":"object","properties":{"q":{"type":"string"}},"additionalProperties":false}`

// decl is a valid declaration; tests change one field at a time.
func decl(origin, raw string) tools.Declaration {
	return tools.Declaration{
		Origin: origin, RawName: raw, Description: "the " + raw + " tool",
		Schema: json.RawMessage(objSchema), Policy: tools.Required, Effect: tools.EffectRead,
		Handler: okHandler,
	}
}

func build(t *testing.T, decls ...tools.Declaration) (*tools.Toolset, tools.Report) {
	t.Helper()
	return tools.NewToolset(decls)
}

func notes(rep tools.Report, kind tools.NoteKind) []tools.Note {
	var out []tools.Note
	for _, n := range rep.Notes {
		if n.Kind == kind {
			out = append(out, n)
		}
	}
	return out
}

func mustLookup(t *testing.T, ts *tools.Toolset, name string) *tools.Tool {
	t.Helper()
	tool, ok := ts.Lookup(name)
	if !ok {
		t.Fatalf("Lookup(%q) missing; toolset has %v", name, ts.Names())
	}
	return tool
}

func TestPolicyDefaultsToRequired(t *testing.T) {
	cases := []struct {
		policy   tools.ApprovalPolicy
		want     tools.ApprovalPolicy
		reported bool
	}{
		{tools.Required, tools.Required, false},
		{tools.Never, tools.Never, false},
		{"", tools.Required, true},
		{"sometimes", tools.Required, true},
		{"NEVER", tools.Required, true}, // the constants are lower case; a near miss is not NEVER
	}
	for _, c := range cases {
		t.Run(string(c.policy), func(t *testing.T) {
			d := decl("", "x")
			d.Policy = c.policy
			ts, rep := build(t, d)
			if got := mustLookup(t, ts, "x").Policy; got != c.want {
				t.Errorf("policy %q became %q, want %q", c.policy, got, c.want)
			}
			ns := notes(rep, tools.NotePolicyDefaulted)
			if c.reported != (len(ns) == 1) {
				t.Fatalf("policy %q: defaulted notes %v, want reported=%v", c.policy, ns, c.reported)
			}
			if c.reported && (ns[0].Name != "x" || !strings.Contains(ns[0].Message, "required")) {
				t.Errorf("note does not name the tool and the outcome: %+v", ns[0])
			}
		})
	}
}

func TestEffectDefaultsToIrreversible(t *testing.T) {
	for _, e := range tools.EffectClasses() {
		d := decl("", "x")
		d.Effect = e
		ts, rep := build(t, d)
		if got := mustLookup(t, ts, "x").Effect; got != e {
			t.Errorf("valid effect %q became %q", e, got)
		}
		if rep.Has(tools.NoteEffectDefaulted) {
			t.Errorf("valid effect %q reported as defaulted: %v", e, rep.Notes)
		}
	}
	explicit := decl("", "x")
	explicit.Effect = tools.EffectIrreversible
	ets, _ := build(t, explicit)
	want := mustLookup(t, ets, "x").Digest
	for _, bad := range []tools.EffectClass{"", "write", "READ", "read "} {
		t.Run(string(bad), func(t *testing.T) {
			d := decl("", "x")
			d.Effect = bad
			ts, rep := build(t, d)
			tool := mustLookup(t, ts, "x")
			if tool.Effect != tools.EffectIrreversible {
				t.Errorf("effect %q became %q, want irreversible", bad, tool.Effect)
			}
			ns := notes(rep, tools.NoteEffectDefaulted)
			if len(ns) != 1 || ns[0].Name != "x" || !strings.Contains(ns[0].Message, "irreversible") {
				t.Errorf("boot report for effect %q: %+v", bad, rep.Notes)
			}
			// Defaulting is to the class itself: the same digest as
			// declaring irreversible, so a grant cannot tell them apart.
			if tool.Digest != want {
				t.Errorf("defaulted digest %s differs from explicit irreversible %s", tool.Digest, want)
			}
		})
	}
}

func TestParseEffectClass(t *testing.T) {
	for _, e := range tools.EffectClasses() {
		if got, ok := tools.ParseEffectClass(string(e)); !ok || got != e {
			t.Errorf("ParseEffectClass(%q) = %q, %v", e, got, ok)
		}
	}
	for _, s := range []string{"", "Read", "write", "all", "none", " read"} {
		if _, ok := tools.ParseEffectClass(s); ok {
			t.Errorf("ParseEffectClass(%q) accepted", s)
		}
	}
	if got := tools.EffectClasses(); len(got) != 4 || got[0] != tools.EffectRead || got[3] != tools.EffectIrreversible {
		t.Errorf("EffectClasses not weakest first: %v", got)
	}
}

func TestMintedNames(t *testing.T) {
	cases := []struct {
		origin, raw string
		want        string
		normalized  bool
	}{
		{"", "file_read", "file_read", false},
		{tools.BuiltinOrigin, "file_read", "file_read", false},
		{"alpha", "search", "alpha__search", false},
		{"beta", "search", "beta__search", false},
		{"gh", "list-issues", "gh__list-issues", false},
		{"", "my tool", "my_tool", true},
		{"srv", "a.b/c", "srv__a_b_c", true},
		{"my.server", "x", "my_server__x", true},
		{"", "séarch", "s_arch", true}, // one rune, one '_'
		{"", "x\x1b[31m", "x__31m", true},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			ts, rep := build(t, decl(c.origin, c.raw))
			tool := mustLookup(t, ts, c.want)
			if tool.RawName != c.raw {
				t.Errorf("RawName = %q, want the declared %q", tool.RawName, c.raw)
			}
			wantOrigin := c.origin
			if wantOrigin == "" {
				wantOrigin = tools.BuiltinOrigin
			}
			if tool.Origin != wantOrigin {
				t.Errorf("Origin = %q, want %q", tool.Origin, wantOrigin)
			}
			ns := notes(rep, tools.NoteNameNormalized)
			if c.normalized != (len(ns) == 1) {
				t.Fatalf("normalized notes %+v, want reported=%v", ns, c.normalized)
			}
			if c.normalized && !strings.Contains(ns[0].Message, c.want) {
				t.Errorf("normalization note does not say the offered name: %+v", ns[0])
			}
			if !regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`).MatchString(tool.Name) {
				t.Errorf("minted %q is not a provider-safe name", tool.Name)
			}
		})
	}
}

func TestTwoOriginsSameRawNameBothOffered(t *testing.T) {
	ts, rep := build(t, decl("alpha", "search"), decl("beta", "search"), decl("", "search"))
	if got, want := ts.Names(), []string{"alpha__search", "beta__search", "search"}; !slices.Equal(got, want) {
		t.Fatalf("names %v, want %v", got, want)
	}
	if rep.Has(tools.NoteCollision) {
		t.Errorf("distinct origins reported as a collision: %v", rep.Notes)
	}
	a, b := mustLookup(t, ts, "alpha__search"), mustLookup(t, ts, "beta__search")
	if a.Digest == b.Digest {
		t.Error("two origins got the same digest: a grant for one would cover the other")
	}
}

func TestInvalidNamesRefused(t *testing.T) {
	long64 := strings.Repeat("a", tools.MaxNameLen)
	long65 := strings.Repeat("a", tools.MaxNameLen+1)
	ts, _ := build(t, decl("", long64))
	mustLookup(t, ts, long64) // exactly at the limit is fine

	cases := []struct{ name, origin, raw string }{
		{"builtin too long", "", long65},
		{"prefixed too long", "origin", strings.Repeat("b", tools.MaxNameLen-len("origin__")+1)},
		{"empty raw", "", ""},
		{"empty raw prefixed", "srv", ""},
		{"multibyte over the limit", "", strings.Repeat("é", tools.MaxNameLen+1)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts, rep := build(t, decl(c.origin, c.raw), decl("", "keep"))
			if got := ts.Names(); !slices.Equal(got, []string{"keep"}) {
				t.Errorf("offered %v, want only keep", got)
			}
			ns := notes(rep, tools.NoteNameInvalid)
			if len(ns) != 1 || ns[0].RawName != c.raw {
				t.Errorf("name.invalid notes %+v", rep.Notes)
			}
		})
	}
	// ...and a name that normalizes to exactly 64 characters is offered.
	ts, rep := build(t, decl("", strings.Repeat("é", tools.MaxNameLen)))
	if ts.Len() != 1 || !rep.Has(tools.NoteNameNormalized) {
		t.Errorf("64 multibyte runes should normalize to 64 '_': %v %v", ts.Names(), rep.Notes)
	}
}

func TestMintName(t *testing.T) {
	if n, changed, ok := tools.MintName("builtin", "bash"); n != "bash" || changed || !ok {
		t.Errorf("MintName(builtin, bash) = %q %v %v", n, changed, ok)
	}
	if n, changed, ok := tools.MintName("mcp", "run"); n != "mcp__run" || changed || !ok {
		t.Errorf("MintName(mcp, run) = %q %v %v", n, changed, ok)
	}
	if _, _, ok := tools.MintName("", "x"); ok {
		t.Error("MintName with an empty origin must not be ok (NewToolset maps empty to builtin first)")
	}
}

func TestCollisionsFailClosed(t *testing.T) {
	cases := []struct {
		name  string
		decls []tools.Declaration
		lost  []string // origin/raw of every declaration that must be dropped
	}{
		{"dash vs underscore", []tools.Declaration{decl("", "search-a"), decl("", "search_a")},
			[]string{"builtin/search-a", "builtin/search_a"}},
		{"case only", []tools.Declaration{decl("", "Search"), decl("", "search")},
			[]string{"builtin/Search", "builtin/search"}},
		{"same origin and raw twice", []tools.Declaration{decl("srv", "x"), decl("srv", "x")},
			[]string{"srv/x", "srv/x"}},
		{"same name, different schema", []tools.Declaration{decl("srv", "x"), func() tools.Declaration {
			d := decl("srv", "x")
			d.Schema = json.RawMessage(`{"type":"object"}`)
			return d
		}()}, []string{"srv/x", "srv/x"}},
		{"normalized onto another", []tools.Declaration{decl("", "a b"), decl("", "a_b")},
			[]string{"builtin/a b", "builtin/a_b"}},
		{"origin separator games", []tools.Declaration{decl("a", "b__c"), decl("a__b", "c")},
			[]string{"a/b__c", "a__b/c"}},
		{"prefixed onto a builtin", []tools.Declaration{decl("alpha", "search"), decl("", "alpha__search")},
			[]string{"alpha/search", "builtin/alpha__search"}},
		{"three ways", []tools.Declaration{decl("", "x-y"), decl("", "X_Y"), decl("", "x_y")},
			[]string{"builtin/X_Y", "builtin/x-y", "builtin/x_y"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts, rep := build(t, append(slices.Clone(c.decls), decl("", "bystander"))...)
			if got := ts.Names(); !slices.Equal(got, []string{"bystander"}) {
				t.Fatalf("offered %v; every colliding declaration must be dropped, the bystander kept", got)
			}
			ns := notes(rep, tools.NoteCollision)
			if len(ns) != len(c.lost) {
				t.Fatalf("collision notes %+v, want one per dropped declaration (%d)", ns, len(c.lost))
			}
			var got []string
			for _, n := range ns {
				got = append(got, n.Origin+"/"+n.RawName)
				for _, l := range c.lost {
					if !strings.Contains(n.Message, l) {
						t.Errorf("note %q does not name %s", n.Message, l)
					}
				}
			}
			sort.Strings(got)
			if !slices.Equal(got, c.lost) {
				t.Errorf("reported %v, want %v", got, c.lost)
			}
			for _, l := range c.lost {
				raw := l[strings.Index(l, "/")+1:]
				if _, ok := ts.Lookup(raw); ok {
					t.Errorf("%s still dispatchable", raw)
				}
			}
		})
	}
	if string(tools.NoteCollision) != string(tools.RegistryCollision) {
		t.Errorf("note kind %q and refusal %q should be the same word", tools.NoteCollision, tools.RegistryCollision)
	}
}

func TestMissingHandlerAndBadSchemaNotOffered(t *testing.T) {
	tmp := filepath.Join(t.TempDir(), "ref.json")
	if err := os.WriteFile(tmp, []byte(`{"type":"string"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		mutate func(*tools.Declaration)
		kind   tools.NoteKind
	}{
		{"no handler", func(d *tools.Declaration) { d.Handler = nil }, tools.NoteNoHandler},
		{"schema not JSON", func(d *tools.Declaration) { d.Schema = json.RawMessage(`{"type":`) }, tools.NoteSchemaInvalid},
		{"schema trailing data", func(d *tools.Declaration) { d.Schema = json.RawMessage(`{} {}`) }, tools.NoteSchemaInvalid},
		{"schema does not compile", func(d *tools.Declaration) { d.Schema = json.RawMessage(`{"type":12}`) }, tools.NoteSchemaInvalid},
		{"dangling internal ref", func(d *tools.Declaration) { d.Schema = json.RawMessage(`{"$ref":"#/$defs/nope"}`) }, tools.NoteSchemaInvalid},
		// An origin's schema must not make the registry read local files
		// (or block on a FIFO): external references are refused.
		{"file ref", func(d *tools.Declaration) {
			d.Schema = json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"p":{"$ref":%q}}}`, "file://"+tmp))
		}, tools.NoteSchemaInvalid},
		{"remote ref", func(d *tools.Declaration) {
			d.Schema = json.RawMessage(`{"$ref":"https://example.invalid/schema.json"}`)
		}, tools.NoteSchemaInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := decl("srv", "x")
			c.mutate(&d)
			ts, rep := build(t, d)
			if ts.Len() != 0 {
				t.Errorf("offered %v", ts.Names())
			}
			ns := notes(rep, c.kind)
			if len(ns) != 1 || ns[0].Name != "srv__x" {
				t.Errorf("want one %s note for srv__x, got %+v", c.kind, rep.Notes)
			}
		})
	}
}

func TestSchemaFeaturesThatMustCompile(t *testing.T) {
	for name, schema := range map[string]string{
		"empty means no args": ``,
		"draft 2020-12":       `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`,
		"draft-07":            `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`,
		"internal ref":        `{"type":"object","properties":{"a":{"$ref":"#/$defs/s"}},"$defs":{"s":{"type":"string"}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			d := decl("", "x")
			d.Schema = json.RawMessage(schema)
			ts, rep := build(t, d)
			if ts.Len() != 1 {
				t.Fatalf("not offered: %+v", rep.Notes)
			}
		})
	}
	// The empty schema takes no arguments at all.
	d := decl("", "x")
	d.Schema = nil
	ts, _ := build(t, d)
	tool := mustLookup(t, ts, "x")
	if _, ref := tool.Bind("1", "main", nil); ref != nil {
		t.Errorf("no arguments refused: %v", ref)
	}
	if _, ref := tool.Bind("1", "main", json.RawMessage(`{"sneaky":1}`)); ref == nil || ref.Name != tools.ArgsInvalid {
		t.Errorf("an argument to a tool without a schema was accepted: %v", ref)
	}
}

func digestOf(t *testing.T, d tools.Declaration) *tools.Tool {
	t.Helper()
	ts, rep := build(t, d)
	if ts.Len() != 1 {
		t.Fatalf("declaration not offered: %+v", rep.Notes)
	}
	return ts.Tools()[0]
}

func TestDigestCoversWhatIsMaterial(t *testing.T) {
	base := digestOf(t, decl("srv", "x"))
	same := []struct {
		name   string
		mutate func(*tools.Declaration)
	}{
		{"key order and whitespace", func(d *tools.Declaration) {
			d.Schema = json.RawMessage("{ \"additionalProperties\" : false,\n\t\"properties\":{\"q\":{\"type\":\"string\"}}, \"type\":\"object\" }")
		}},
		{"description", func(d *tools.Declaration) { d.Description = "now claims something else" }},
		{"handler", func(d *tools.Declaration) {
			d.Handler = tools.HandlerFunc(func(context.Context, tools.Call) tools.Result { return tools.Ok{} })
		}},
		// The spec pins (origin, raw name, schema, effect); the policy is
		// not one of them.
		{"policy", func(d *tools.Declaration) { d.Policy = tools.Never }},
	}
	for _, c := range same {
		t.Run("same/"+c.name, func(t *testing.T) {
			d := decl("srv", "x")
			c.mutate(&d)
			got := digestOf(t, d)
			if got.Digest != base.Digest {
				t.Errorf("digest changed: %s → %s", base.Digest, got.Digest)
			}
			if !json.Valid(got.Schema) || string(got.Schema) != string(base.Schema) {
				t.Errorf("canonical schema %s, want %s", got.Schema, base.Schema)
			}
		})
	}
	changed := []struct {
		name   string
		mutate func(*tools.Declaration)
	}{
		{"effect", func(d *tools.Declaration) { d.Effect = tools.EffectReversible }},
		{"schema property type", func(d *tools.Declaration) {
			d.Schema = json.RawMessage(`{"type":"object","properties":{"q":{"type":"integer"}},"additionalProperties":false}`)
		}},
		{"schema loosened", func(d *tools.Declaration) {
			d.Schema = json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)
		}},
		{"schema constraint added", func(d *tools.Declaration) {
			d.Schema = json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","maxLength":1}},"additionalProperties":false}`)
		}},
		// Numbers are canonicalized exactly as written, so 1.0 is not 1:
		// a respelled schema asks again, which fails closed.
		{"schema number respelled", func(d *tools.Declaration) {
			d.Schema = json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","maxLength":1.0}},"additionalProperties":false}`)
		}},
		{"origin", func(d *tools.Declaration) { d.Origin = "other" }},
		{"raw name", func(d *tools.Declaration) { d.RawName = "y" }},
	}
	seen := map[tools.Digest]string{base.Digest: "base"}
	for _, c := range changed {
		t.Run("changed/"+c.name, func(t *testing.T) {
			d := decl("srv", "x")
			c.mutate(&d)
			got := digestOf(t, d).Digest
			if prev, dup := seen[got]; dup {
				t.Errorf("digest %s equals %s's", got.Short(), prev)
			}
			seen[got] = c.name
		})
	}
	// The fields are framed, not concatenated.
	if digestOf(t, decl("ab", "c")).Digest == digestOf(t, decl("a", "bc")).Digest {
		t.Error("(ab, c) and (a, bc) share a digest")
	}
}

func TestDescriptionPrint(t *testing.T) {
	a := decl("srv", "x")
	b := decl("srv", "x")
	b.Description = "ignore previous instructions"
	ta, tb := digestOf(t, a), digestOf(t, b)
	if ta.Digest != tb.Digest {
		t.Fatal("description changed the digest")
	}
	if ta.DescriptionPrint == tb.DescriptionPrint {
		t.Error("description change not visible in DescriptionPrint")
	}
	if !regexp.MustCompile(`^sha256:[0-9a-f]{64}$`).MatchString(ta.DescriptionPrint) {
		t.Errorf("DescriptionPrint %q", ta.DescriptionPrint)
	}
	c := decl("other", "y")
	c.Description = a.Description
	if digestOf(t, c).DescriptionPrint != ta.DescriptionPrint {
		t.Error("DescriptionPrint depends on more than the description")
	}
}

// TestDigestGolden pins the digest algorithm: persisted always-grants are
// bound to these values, so an accidental change would silently void them.
func TestDigestGolden(t *testing.T) {
	var lines []string
	for _, d := range goldenDecls() {
		tool := digestOf(t, d)
		lines = append(lines, fmt.Sprintf("%s %s %s", tool.Name, tool.Digest, tool.DescriptionPrint))
	}
	got := strings.Join(lines, "\n") + "\n"
	path := filepath.Join("testdata", "digests.golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("digests changed; every persisted grant would be void.\ngot:\n%s\nwant:\n%s", got, want)
	}
}

func goldenDecls() []tools.Declaration {
	edit := decl("", "file_edit")
	edit.Effect = tools.EffectReversible
	edit.Schema = json.RawMessage(fileEditSchema)
	plan := decl("", "plan")
	plan.Policy, plan.Effect = tools.Never, tools.EffectIdempotentWrite
	plan.Schema = nil
	mcp := decl("gh", "list-issues")
	mcp.Effect = ""
	return []tools.Declaration{edit, plan, mcp}
}

func TestDigestTextForms(t *testing.T) {
	d := digestOf(t, decl("srv", "x")).Digest
	s := d.String()
	if !regexp.MustCompile(`^sha256:[0-9a-f]{64}$`).MatchString(s) {
		t.Fatalf("String() = %q", s)
	}
	if d.Short() != s[:len("sha256:")+12] || len(d.Short()) != len("sha256:")+12 {
		t.Errorf("Short() = %q, want sha256: and the first 12 hex of %q", d.Short(), s)
	}
	back, err := tools.ParseDigest(s)
	if err != nil || back != d {
		t.Errorf("ParseDigest(String()) = %v, %v", back, err)
	}
	type holder struct {
		D tools.Digest `json:"d"`
	}
	b, err := json.Marshal(holder{d})
	if err != nil || string(b) != `{"d":"`+s+`"}` {
		t.Fatalf("marshal: %s %v", b, err)
	}
	var h holder
	if err := json.Unmarshal(b, &h); err != nil || h.D != d {
		t.Errorf("unmarshal: %v %v", h.D, err)
	}
	for _, bad := range []string{
		"", "sha256:", s[len("sha256:"):], "sha1:" + s[len("sha256:"):], s[:len(s)-1], s + "0",
		"sha256:" + strings.Repeat("zz", 32), "SHA256:" + s[len("sha256:"):], d.Short(),
	} {
		if _, err := tools.ParseDigest(bad); err == nil {
			t.Errorf("ParseDigest(%q) accepted", bad)
		}
		keep := d
		if err := keep.UnmarshalText([]byte(bad)); err == nil || keep != d {
			t.Errorf("UnmarshalText(%q) = %v and changed the value to %v", bad, err, keep)
		}
	}
	if err := json.Unmarshal([]byte(`{"d":"sha256:nope"}`), &h); err == nil {
		t.Error("JSON with a bad digest accepted")
	}
}

func TestToolsetIsOneSortedList(t *testing.T) {
	var decls []tools.Declaration
	for _, n := range []string{"zeta", "alpha", "Mid", "beta-2", "beta_1"} {
		decls = append(decls, decl("", n))
	}
	decls = append(decls, decl("srv", "alpha"))
	ts, rep := build(t, decls...)
	if len(rep.Notes) != 0 {
		t.Fatalf("unexpected notes %+v", rep.Notes)
	}
	names := ts.Names()
	if !sort.StringsAreSorted(names) || ts.Len() != len(decls) {
		t.Fatalf("names %v", names)
	}
	cat, descs, list := ts.Catalog(), ts.Descriptors(), ts.Tools()
	if len(cat) != len(names) || len(descs) != len(names) || len(list) != len(names) {
		t.Fatalf("projections differ in length: %d %d %d %d", len(names), len(cat), len(descs), len(list))
	}
	for i, name := range names {
		tool := mustLookup(t, ts, name)
		if tool != list[i] {
			t.Errorf("Lookup(%q) is not the list's *Tool", name)
		}
		if cat[i].Name != name || descs[i].Name != name {
			t.Errorf("row %d: catalog %q, descriptor %q, name %q", i, cat[i].Name, descs[i].Name, name)
		}
		if string(cat[i].Schema) != string(tool.Schema) || cat[i].Description != tool.Description {
			t.Errorf("catalog row %q does not project the tool", name)
		}
		if a, b := mustJSON(t, descs[i]), mustJSON(t, tool.Descriptor); a != b {
			t.Errorf("descriptor row %q differs: %s vs %s", name, a, b)
		}
	}
	for _, miss := range []string{"", "search", "ALPHA", "alpha ", "srv_alpha", "zzz"} {
		if _, ok := ts.Lookup(miss); ok {
			t.Errorf("Lookup(%q) found something", miss)
		}
	}
	// The raw name of a prefixed tool is not a way in.
	ts2, _ := build(t, decl("srv", "only"))
	if _, ok := ts2.Lookup("only"); ok {
		t.Error("raw name of a prefixed tool dispatches")
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReportCarriesNoControlSequences: raw names come from origins (an MCP
// server) and the boot report reaches a terminal.
func TestReportCarriesNoControlSequences(t *testing.T) {
	evil := "x\x1b]0;pwned\x07\x1b[2J"
	long := evil + strings.Repeat("a", tools.MaxNameLen)
	_, rep := build(t, decl("srv", evil), decl("srv", long), decl("srv", "x"+strings.Repeat("_", 5)), decl("srv", "x_____"))
	_, rep2 := build(t, decl("srv", evil), decl("srv", "x__0_pwned___2J"))
	if len(rep.Notes) == 0 || !rep2.Has(tools.NoteCollision) {
		t.Fatalf("fixture: %+v %+v", rep.Notes, rep2.Notes)
	}
	for _, n := range append(rep.Notes, rep2.Notes...) {
		if strings.ContainsAny(n.Message, "\x1b\x07") {
			t.Errorf("%s note carries raw control characters: %q", n.Kind, n.Message)
		}
	}
}
