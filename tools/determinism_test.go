package tools_test

import (
	"encoding/json"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"staage/tools"
)

// mixedDecls exercises every path of NewToolset at once: plain builtins,
// prefixed origins, a shared raw name, defaults, normalization, collisions of
// each kind, refused names and a missing handler.
func mixedDecls() []tools.Declaration {
	mk := func(origin, raw string, f func(*tools.Declaration)) tools.Declaration {
		d := decl(origin, raw)
		if f != nil {
			f(&d)
		}
		return d
	}
	return []tools.Declaration{
		mk("", "file_read", nil),
		mk("", "file_edit", func(d *tools.Declaration) {
			d.Schema, d.Effect = json.RawMessage(fileEditSchema), tools.EffectReversible
		}),
		mk("", "plan", func(d *tools.Declaration) { d.Policy, d.Effect = tools.Never, tools.EffectIdempotentWrite }),
		mk("alpha", "search", nil),
		mk("beta", "search", func(d *tools.Declaration) { d.Effect = "" }),
		mk("gamma", "weird name!", nil),
		mk("", "search-a", nil),
		mk("", "search_a", nil),
		mk("", "Dup", nil),
		mk("", "dup", nil),
		mk("srv", "twice", nil),
		mk("srv", "twice", func(d *tools.Declaration) { d.Description = "second" }),
		mk("", strings.Repeat("n", 65), nil),
		mk("", "no_handler", func(d *tools.Declaration) { d.Handler = nil }),
		mk("delta", "policy", func(d *tools.Declaration) { d.Policy = "maybe" }),
		mk("", "bash", func(d *tools.Declaration) { d.Effect = tools.EffectIrreversible }),
	}
}

func sortedNotes(rep tools.Report) []string {
	var out []string
	for _, n := range rep.Notes {
		b, _ := json.Marshal(n)
		out = append(out, string(b))
	}
	slices.Sort(out)
	return out
}

// TestSameDeclarationsAnyOrder is the property of DESIGN: the same
// declarations in any order give the same names, list, digests and catalog,
// and the same boot report (as a set of lines).
func TestSameDeclarationsAnyOrder(t *testing.T) {
	base := mixedDecls()
	ts0, rep0 := tools.NewToolset(base)
	want := mustJSON(t, ts0.Descriptors())
	wantCat := mustJSON(t, ts0.Catalog())
	wantNotes := sortedNotes(rep0)
	if got, wantNames := ts0.Names(), []string{
		"alpha__search", "bash", "beta__search", "delta__policy", "file_edit", "file_read", "gamma__weird_name_", "plan",
	}; !slices.Equal(got, wantNames) {
		t.Fatalf("offered %v, want %v", got, wantNames)
	}

	rng := rand.New(rand.NewPCG(6, 2026)) // fixed seed: a failure reproduces
	for i := range 200 {
		perm := slices.Clone(base)
		rng.Shuffle(len(perm), func(a, b int) { perm[a], perm[b] = perm[b], perm[a] })
		ts, rep := tools.NewToolset(perm)
		if got := mustJSON(t, ts.Descriptors()); got != want {
			t.Fatalf("permutation %d: descriptors differ\n got %s\nwant %s", i, got, want)
		}
		if got := mustJSON(t, ts.Catalog()); got != wantCat {
			t.Fatalf("permutation %d: catalog differs", i)
		}
		if got := sortedNotes(rep); !slices.Equal(got, wantNotes) {
			t.Fatalf("permutation %d: report differs\n got %v\nwant %v", i, got, wantNotes)
		}
		for _, name := range ts.Names() {
			a, _ := ts.Lookup(name)
			b, _ := ts0.Lookup(name)
			if a.Digest != b.Digest {
				t.Fatalf("permutation %d: %s digest %s, want %s", i, name, a.Digest, b.Digest)
			}
		}
	}
}

// TestNewToolsetDoesNotAliasInput: the toolset keeps its own canonical
// schema, so a caller that reuses its buffer cannot change a pinned tool.
func TestNewToolsetDoesNotAliasInput(t *testing.T) {
	schema := []byte(`{"type":"object"}`)
	d := decl("", "x")
	d.Schema = schema
	ts, _ := tools.NewToolset([]tools.Declaration{d})
	before := string(mustLookup(t, ts, "x").Schema)
	copy(schema, `{"type":"string"}`)
	if after := string(mustLookup(t, ts, "x").Schema); after != before {
		t.Errorf("pinned schema changed from %s to %s", before, after)
	}
}

// TestMintNameProperty: over random origins and raw names (control bytes,
// multibyte runes, separators), a minted name is always provider-safe, ok
// exactly when it fits, and "changed" exactly when a character was replaced.
func TestMintNameProperty(t *testing.T) {
	alphabet := []rune("aZ09_-.: /\x00\x1b\u00e9\u212a\u017f\U0001F600\u200b")
	safe := regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)
	rng := rand.New(rand.NewPCG(64, 6))
	word := func(max int) string {
		n := rng.IntN(max + 1)
		rs := make([]rune, n)
		for i := range rs {
			rs[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(rs)
	}
	for range 5000 {
		origin, raw := word(8), word(70)
		if rng.IntN(3) == 0 {
			origin = tools.BuiltinOrigin
		}
		name, changed, ok := tools.MintName(origin, raw)
		plain := raw
		if origin != tools.BuiltinOrigin {
			plain = origin + "__" + raw
		}
		if changed != (name != plain) {
			t.Fatalf("MintName(%q, %q) = %q, changed=%v", origin, raw, name, changed)
		}
		if utf8.RuneCountInString(name) != utf8.RuneCountInString(plain) {
			t.Fatalf("MintName(%q, %q) = %q: one rune must become one character", origin, raw, name)
		}
		wantOK := raw != "" && origin != "" && len(name) <= tools.MaxNameLen
		if ok != wantOK {
			t.Fatalf("MintName(%q, %q) ok=%v, want %v", origin, raw, ok, wantOK)
		}
		if ok && !safe.MatchString(name) {
			t.Fatalf("MintName(%q, %q) = %q is not provider-safe", origin, raw, name)
		}
	}
}
