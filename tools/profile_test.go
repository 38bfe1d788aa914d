package tools_test

import (
	"slices"
	"testing"

	"staage/tools"
)

// catalogDecls declares the spec's catalog by name (plus an MCP tool), so
// the profiles are checked against the names they will really meet.
func catalogDecls() []tools.Declaration {
	var out []tools.Declaration
	for _, n := range []string{
		"scratch_read", "file_read", "file_edit", "file_write", "file_find", "file_search",
		"skill_list", "skill_load", "bash", "plan", "desk", "task", "apply_change",
		"bank_search", "bank_get", "librarian", "research",
	} {
		out = append(out, decl("", n))
	}
	return append(out, decl("mcp", "file_read"))
}

func TestProfiles(t *testing.T) {
	ts, rep := tools.NewToolset(catalogDecls())
	if len(rep.Notes) != 0 || ts.Len() != 18 {
		t.Fatalf("catalog: %v %+v", ts.Names(), rep.Notes)
	}
	cases := []struct {
		name string
		p    tools.Profile
		want []string
	}{
		{"full", tools.Full(), ts.Names()},
		{"scout", tools.Scout(), []string{
			"bank_get", "bank_search", "file_find", "file_read", "file_search", "plan", "research", "skill_list", "skill_load",
		}},
		{"write child", tools.WriteChild(), []string{"file_edit", "file_find", "file_read", "file_search", "file_write", "plan"}},
		{"full without librarian", tools.Full().SwitchOff("librarian"), without(ts.Names(), "librarian")},
		{"scout without research", tools.Scout().SwitchOff("research", "not_a_tool"), []string{
			"bank_get", "bank_search", "file_find", "file_read", "file_search", "plan", "skill_list", "skill_load",
		}},
		{"only nothing", tools.Profile{Name: "empty", Only: []string{}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := ts.Narrow(c.p)
			if got := n.Names(); !slices.Equal(got, c.want) {
				t.Fatalf("narrowed to %v, want %v", got, c.want)
			}
			for _, tool := range n.Tools() {
				parent := mustLookup(t, ts, tool.Name)
				if tool != parent {
					t.Errorf("%s is a copy, not the parent's *Tool", tool.Name)
				}
				if got := mustLookup(t, n, tool.Name); got != parent {
					t.Errorf("narrowed Lookup(%s) dispatches elsewhere", tool.Name)
				}
			}
			for _, name := range ts.Names() {
				if _, ok := n.Lookup(name); ok != slices.Contains(c.want, name) {
					t.Errorf("Lookup(%s) = %v in %s", name, ok, c.name)
				}
			}
			if len(n.Catalog()) != len(c.want) {
				t.Errorf("catalog of %s has %d rows", c.name, len(n.Catalog()))
			}
		})
	}
	// Neither child may reach a process, a delegation or the main checkout.
	for _, p := range []tools.Profile{tools.Scout(), tools.WriteChild()} {
		for _, banned := range []string{"bash", "task", "apply_change", "scratch_read", "dev_check", "desk", "mcp__file_read"} {
			if p.Allows(banned) {
				t.Errorf("%s allows %s", p.Name, banned)
			}
		}
	}
	for _, banned := range []string{"file_edit", "file_write"} {
		if tools.Scout().Allows(banned) {
			t.Errorf("scout allows %s", banned)
		}
	}
}

func TestSwitchOffDoesNotMutateTheParent(t *testing.T) {
	base := tools.Profile{Name: "p", Without: make([]string, 1, 8)}
	base.Without[0] = "a"
	one := base.SwitchOff("b")
	two := base.SwitchOff("c")
	if !slices.Equal(base.Without, []string{"a"}) {
		t.Errorf("parent changed: %v", base.Without)
	}
	if !slices.Equal(one.Without, []string{"a", "b"}) || !slices.Equal(two.Without, []string{"a", "c"}) {
		t.Errorf("turn profiles share storage: %v %v", one.Without, two.Without)
	}
	if one.Allows("b") || !one.Allows("c") || two.Allows("c") || !two.Allows("b") {
		t.Error("SwitchOff does not remove exactly its own names")
	}
	scout := tools.Scout()
	_ = scout.SwitchOff("file_read")
	if !tools.Scout().Allows("file_read") || !scout.Allows("file_read") {
		t.Error("switching a tool off for one turn removed it from the profile")
	}
}

func without(names []string, drop string) []string {
	return slices.DeleteFunc(slices.Clone(names), func(s string) bool { return s == drop })
}
