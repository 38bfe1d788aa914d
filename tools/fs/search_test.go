package fs

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"staage/tools"
	"staage/tools/workspace"
)

func searchTree(t *testing.T) *harness {
	long := strings.Repeat("x", 1000) + "NEEDLE" + strings.Repeat("y", 1000)
	h := newHarness(t, map[string]string{
		".gitignore":    "ignored/\n",
		"a.go":          "package a\n// NEEDLE one\nfunc A() {}\n// needle lower\n",
		"b/c.go":        "NEEDLE NEEDLE twice on one line\nno\nNEEDLE\n",
		"b/d.txt":       "text NEEDLE\r\nsecond\r\n",
		"bin.dat":       "NEEDLE\x00binary",
		"ignored/x.go":  "NEEDLE\n",
		".git/config":   "NEEDLE\n",
		".hidden/e.go":  "NEEDLE hidden\n",
		"long.txt":      long + "\n",
		"span.txt":      "a\nb\n",
		"utf8.txt":      strings.Repeat("é", 300) + "NEEDLE\n",
		"nofinal.txt":   "x\nNEEDLE at end",
		"empty.txt":     "",
		"sub/deep/f.md": "# NEEDLE\n",
	})
	if err := os.Symlink(filepath.Join(h.dir, "a.go"), h.path("link.go")); err != nil {
		t.Fatal(err)
	}
	return h
}

func TestSearchFindsLines(t *testing.T) {
	h := searchTree(t)
	p := ok[SearchPayload](h, "file_search", map[string]any{"pattern": "NEEDLE", "literal": true})
	var got []string
	for _, m := range p.Matches {
		got = append(got, fmt.Sprintf("%s:%d", m.Path, m.Line))
	}
	want := []string{".hidden/e.go:1", "a.go:2", "b/c.go:1", "b/c.go:3", "b/d.txt:1", "long.txt:1", "nofinal.txt:2", "sub/deep/f.md:1", "utf8.txt:1"}
	if !slices.Equal(got, want) {
		t.Fatalf("matches\n got %q\nwant %q", got, want)
	}
	if p.SkippedBinary != 1 || p.ClippedLines != 2 || p.Truncated || p.ScanCapped {
		t.Fatalf("bounds %+v", p.Bounds)
	}
	byPath := map[string]Match{}
	for _, m := range p.Matches {
		byPath[m.Path] = m
	}
	if byPath["b/d.txt"].Text != "text NEEDLE" {
		t.Fatalf("CR kept: %q", byPath["b/d.txt"].Text)
	}
	if l := byPath["long.txt"].Text; len(l) > MaxSearchLineBytes || !strings.Contains(l, "NEEDLE") {
		t.Fatalf("long line clip lost the match: %d bytes %q", len(l), l)
	}
	if u := byPath["utf8.txt"].Text; !utf8Valid(u) || !strings.Contains(u, "NEEDLE") {
		t.Fatalf("utf8 clip: %q", u)
	}
	if byPath["nofinal.txt"].Text != "NEEDLE at end" {
		t.Fatalf("last line: %q", byPath["nofinal.txt"].Text)
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

func TestSearchRegexpIsLineConfined(t *testing.T) {
	h := searchTree(t)
	cases := map[string][]string{
		`(?i)needle lower`: {"a.go:4"},
		`a\sb`:             nil,
		`(?s)a.b`:          nil,
		`a\nb`:             nil,
		`a[^x]b`:           nil,
		`^b$`:              {"span.txt:2"},
		`\Ab\z`:            {"span.txt:2"},
		`^NEEDLE$`:         {"b/c.go:3"},
		`func \w+\(\)`:     {"a.go:3"},
		`NEEDLE hid(den)+`: {".hidden/e.go:1"},
		`NEEDLE$`:          {"b/c.go:3", "sub/deep/f.md:1", "utf8.txt:1"},
		`NEEDLE\r?$`:       {"b/c.go:3", "b/d.txt:1", "sub/deep/f.md:1", "utf8.txt:1"},
	}
	for pat, want := range cases {
		p := ok[SearchPayload](h, "file_search", map[string]any{"pattern": pat})
		var got []string
		for _, m := range p.Matches {
			got = append(got, fmt.Sprintf("%s:%d", m.Path, m.Line))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: got %q want %q", pat, got, want)
		}
	}
}

func TestSearchGlobAndPaging(t *testing.T) {
	h := searchTree(t)
	p := ok[SearchPayload](h, "file_search", map[string]any{"pattern": "NEEDLE", "literal": true, "glob": "*.go"})
	if len(p.Matches) != 4 {
		t.Fatalf("glob *.go: %+v", p.Matches)
	}
	p = ok[SearchPayload](h, "file_search", map[string]any{"pattern": "NEEDLE", "literal": true, "glob": "b/**"})
	if len(p.Matches) != 3 || p.Matches[0].Path != "b/c.go" {
		t.Fatalf("glob b/**: %+v", p.Matches)
	}
	all := ok[SearchPayload](h, "file_search", map[string]any{"pattern": "NEEDLE", "literal": true}).Matches
	for _, limit := range []int{1, 2, 4} {
		var got []Match
		args := map[string]any{"pattern": "NEEDLE", "literal": true, "limit": limit}
		for pages := 0; ; pages++ {
			if pages > len(all)+1 {
				t.Fatal("paging does not end")
			}
			p := ok[SearchPayload](h, "file_search", args)
			if len(p.Matches) > limit {
				t.Fatalf("page over limit")
			}
			got = append(got, p.Matches...)
			if !p.Truncated {
				break
			}
			args["cursor"] = p.NextCursor
		}
		if !slices.Equal(got, all) {
			t.Fatalf("limit %d: pages\n%+v\nwant\n%+v", limit, got, all)
		}
	}
}

func TestSearchBounds(t *testing.T) {
	h := searchTree(t)
	ctx := context.Background()
	q, _ := compileQuery("NEEDLE", true)
	lim := defaultSearchLimits()
	lim.maxFileBytes = 100
	res, err := search(ctx, h.ws, q, nil, cursor{}, 100, lim)
	if err != nil || res.SkippedLarge != 2 { // long.txt and utf8.txt
		t.Fatalf("large: %+v %v", res.Bounds, err)
	}
	lim = defaultSearchLimits()
	lim.maxScanBytes = 10
	res, err = search(ctx, h.ws, q, nil, cursor{}, 100, lim)
	if err != nil || !res.ScanCapped || res.NextCursor == "" || res.Truncated {
		t.Fatalf("scan cap: %+v %v", res.Bounds, err)
	}
	lim = defaultSearchLimits()
	lim.maxEntries = 3
	res, err = search(ctx, h.ws, q, nil, cursor{}, 100, lim)
	if err != nil || !res.ScanCapped {
		t.Fatalf("entry cap: %+v %v", res.Bounds, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := search(cctx, h.ws, q, nil, cursor{}, 100, defaultSearchLimits()); err == nil {
		t.Fatal("a cancelled search reported success")
	}
}

func TestSearchRefusals(t *testing.T) {
	h := searchTree(t)
	h.refused("file_search", map[string]any{"pattern": "a("}, tools.FindInvalid)
	h.refused("file_search", map[string]any{"pattern": "x", "glob": "["}, tools.FindInvalid)
	h.refused("file_search", map[string]any{"pattern": "a\nb", "literal": true}, tools.FindInvalid)
	h.refused("file_search", map[string]any{"pattern": "x", "cursor": "!!"}, tools.FindInvalid)
	h.refused("file_search", map[string]any{"pattern": ""}, tools.ArgsInvalid)
	h.refused("file_search", map[string]any{"pattern": strings.Repeat("a", 5000)}, tools.ArgsInvalid)
	h.refused("file_search", map[string]any{"pattern": "x", "limit": MaxSearchLimit + 1}, tools.ArgsInvalid)
	h.refused("file_search", map[string]any{"pattern": "x", "path": "/etc"}, tools.ArgsInvalid)
	h.refused("file_search", map[string]any{"pattern": "x", "literal": "yes"}, tools.ArgsInvalid)
}

// TestSearchAgreesWithRipgrep uses ripgrep as the oracle on a real tree.
func TestSearchAgreesWithRipgrep(t *testing.T) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		t.Skip("ripgrep not installed")
	}
	dir := filepath.Join(runtime.GOROOT(), "src", "regexp")
	ws, err := workspace.Open(dir)
	if err != nil {
		t.Skip(err)
	}
	defer ws.Close()
	for _, c := range []struct {
		pattern string
		literal bool
	}{{"func (", true}, {`\bre\.\w+\(`, false}, {`^\s*//.*[Mm]atch`, false}, {`(?i)UNICODE`, false}} {
		res, err := search(context.Background(), ws, mustQuery(t, c.pattern, c.literal), nil, cursor{}, 1<<20, defaultSearchLimits())
		if err != nil {
			t.Fatal(err)
		}
		var ours []string
		for _, m := range res.matches {
			ours = append(ours, m.Path+":"+strconv.Itoa(m.Line))
		}
		args := []string{"-n", "--no-heading", "--hidden", "--no-ignore", "-a", "--no-config"}
		if c.literal {
			args = append(args, "-F")
		}
		cmd := exec.Command(rg, append(args, "-e", c.pattern, ".")...)
		cmd.Dir = dir
		out, _ := cmd.Output()
		var theirs []string
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			parts := strings.SplitN(strings.TrimPrefix(sc.Text(), "./"), ":", 3)
			theirs = append(theirs, parts[0]+":"+parts[1])
		}
		slices.Sort(ours)
		slices.Sort(theirs)
		if len(ours) == 0 {
			t.Errorf("%q: no match at all", c.pattern)
		}
		if !slices.Equal(ours, theirs) {
			t.Errorf("%q: ours %d lines, ripgrep %d", c.pattern, len(ours), len(theirs))
		}
	}
}

func mustQuery(t *testing.T, p string, lit bool) *query {
	t.Helper()
	q, err := compileQuery(p, lit)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestSearchConcurrentCalls runs calls in parallel on one handler (which
// shares a buffer pool): each must see the same answer.
func TestSearchConcurrentCalls(t *testing.T) {
	h := searchTree(t)
	want := ok[SearchPayload](h, "file_search", map[string]any{"pattern": "NEEDLE", "literal": true})
	tool, call, ref := h.bind("file_search", map[string]any{"pattern": "NEEDLE", "literal": true})
	if ref != nil {
		t.Fatal(ref)
	}
	errs := make(chan string, 8)
	for range 8 {
		go func() {
			res, isOk := tool.Handler().Run(context.Background(), call).(tools.Ok)
			if !isOk {
				errs <- "refused"
				return
			}
			if got := res.Payload.(SearchPayload); !slices.Equal(got.Matches, want.Matches) {
				errs <- fmt.Sprintf("got %d matches, want %d", len(got.Matches), len(want.Matches))
				return
			}
			errs <- ""
		}()
	}
	for range 8 {
		if e := <-errs; e != "" {
			t.Fatal(e)
		}
	}
}

// TestSearchWorkerPanicIsAnError: a bug in a worker goroutine fails the
// call; it does not crash the process. An empty query reaches the DFA path
// with no program, which panics inside a worker.
func TestSearchWorkerPanicIsAnError(t *testing.T) {
	h := searchTree(t)
	_, err := search(context.Background(), h.ws, &query{}, nil, cursor{}, 10, defaultSearchLimits())
	if err == nil || !strings.Contains(err.Error(), "panicked") {
		t.Fatalf("err = %v", err)
	}
}
