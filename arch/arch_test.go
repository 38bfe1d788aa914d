package arch

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const module = "staage"

// rule forbids a package (matched by prefix) from importing some packages.
type rule struct {
	from   string   // package path prefix the rule applies to
	except []string // package path prefixes exempt from the rule
	forbid []string // import path prefixes that are forbidden
	why    string
}

// family reports whether p is a tool family (tools/<x>), not the registry.
func family(p string) bool {
	return strings.HasPrefix(p, module+"/tools/") && !strings.HasPrefix(p, module+"/tools/toolset")
}

var rules = []rule{
	{from: "staage/tools", except: []string{"staage/tools/"}, forbid: []string{"staage/", "time", "math/rand", "crypto/rand", "os"},
		why: "the registry is pure: no other staage package, no clock, no randomness, no environment"},
	{from: "staage/tools/", except: []string{"staage/tools/toolset"}, forbid: []string{"staage/agent", "staage/approvals", "staage/ui", "staage/themes", "staage/cmd", "staage/tools/toolset", "staage/config", "staage/demo"},
		why: "tool families know only the registry (and shared helpers), never the loop, the gate or the UI"},
	{from: "staage/approvals", forbid: []string{"staage/agent", "staage/ui", "staage/themes", "staage/cmd", "family:", "staage/config"},
		why: "approvals → tools only"},
	{from: "staage/agent", forbid: []string{"staage/ui", "staage/themes", "staage/cmd", "family:", "staage/tools/toolset", "staage/demo"},
		why: "agent never imports ui, and reaches tools only through the registry"},
	{from: "staage/ui", forbid: []string{"staage/cmd", "family:", "staage/tools/toolset", "staage/config"},
		why: "ui renders events and previews; it never reaches into a tool's internals"},
	{from: "staage/themes", forbid: []string{"staage/agent", "staage/approvals", "staage/ui", "staage/cmd", "family:", "staage/config"},
		why: "themes are palettes: they know effect classes, nothing else"},
	{from: "staage/textdiff", forbid: []string{"staage/"}, why: "textdiff is a leaf"},
	{from: "staage/", except: []string{"staage/cmd/"}, forbid: []string{"staage/cmd"}, why: "nothing imports a command"},
}

func matches(prefix, p string) bool {
	if strings.HasSuffix(prefix, "/") {
		return strings.HasPrefix(p, prefix)
	}
	return p == prefix || strings.HasPrefix(p, prefix+"/")
}

// violations checks a package → imports map against the rules.
func violations(pkgs map[string][]string) []string {
	var out []string
	seen := map[string]bool{}
	for pkg, imps := range pkgs {
		for _, r := range rules {
			if !matches(r.from, pkg) || (r.from == "staage/tools" && pkg != "staage/tools") {
				continue
			}
			exempt := false
			for _, e := range r.except {
				if matches(e, pkg) {
					exempt = true
				}
			}
			if exempt {
				continue
			}
			for _, imp := range imps {
				for _, f := range r.forbid {
					hit := false
					if f == "family:" {
						hit = family(imp)
					} else {
						hit = matches(f, imp)
					}
					if hit && !seen[pkg+" "+imp] {
						seen[pkg+" "+imp] = true
						out = append(out, pkg+" imports "+imp+": "+r.why)
					}
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// imports reads the non-test imports of every package in the module.
func imports(t *testing.T, root string) map[string][]string {
	t.Helper()
	pkgs := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
			return filepath.SkipDir
		}
		bp, err := build.ImportDir(path, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(root, path)
		ip := module
		if rel != "." {
			ip = module + "/" + filepath.ToSlash(rel)
		}
		pkgs[ip] = bp.Imports
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

func TestImportArrows(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal("arch test must run from the module's arch/ directory")
	}
	pkgs := imports(t, root)
	for _, must := range []string{"staage/tools", "staage/agent", "staage/approvals", "staage/cmd/staage"} {
		if _, ok := pkgs[must]; !ok {
			t.Fatalf("package %s not found: the walk is broken", must)
		}
	}
	for _, v := range violations(pkgs) {
		t.Error(v)
	}
}

// The checker itself must catch the breaks the design names.
func TestCheckerCatchesBrokenArrows(t *testing.T) {
	broken := map[string][]string{
		"staage/agent":          {"staage/ui"},
		"staage/ui/app":         {"staage/tools/fs"},
		"staage/tools":          {"time"},
		"staage/tools/fs":       {"staage/agent"},
		"staage/approvals":      {"staage/agent"},
		"staage/agent/journal":  {"staage/cmd/staage"},
		"staage/tools/toolset":  {"staage/tools/fs"},
		"staage/ui/transcript":  {"staage/tools", "staage/agent"},
		"staage/tools/delegate": {"staage/tools/workspace"},
	}
	got := violations(broken)
	want := []string{
		"staage/agent imports staage/ui",
		"staage/agent/journal imports staage/cmd/staage",
		"staage/approvals imports staage/agent",
		"staage/tools imports time",
		"staage/tools/fs imports staage/agent",
		"staage/ui/app imports staage/tools/fs",
	}
	if len(got) != len(want) {
		t.Fatalf("got %d violations, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]+":") {
			t.Errorf("violation %d = %q, want prefix %q", i, got[i], want[i])
		}
	}
}
