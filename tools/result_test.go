package tools_test

import (
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"staage/tools"
)

type listing struct {
	tools.Bounds
	Paths []string `json:"paths"`
}

func TestWireRoundTrip(t *testing.T) {
	results := []tools.Result{
		tools.Ok{Payload: listing{Bounds: tools.Bounds{Truncated: true, NextCursor: "c2", SkippedBinary: 3}, Paths: []string{"a", "b"}}},
		tools.Ok{Payload: map[string]any{"n": json.Number("12345678901234567890")}},
		tools.Ok{Payload: "text"},
		tools.Refuse(tools.FileStale, "a.go changed since it was read").With("want", "sha256:1").With("lines", 3),
		tools.Refuse(tools.ArgsInvalid, "no details"),
	}
	for i, r := range results {
		w := tools.ToWire(r)
		b, err := json.Marshal(w)
		if err != nil {
			t.Fatalf("%d: marshal wire: %v", i, err)
		}
		var back tools.WireResult
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%d: unmarshal wire: %v", i, err)
		}
		r2 := tools.FromWire(back)
		b2, err := json.Marshal(tools.ToWire(r2))
		if err != nil || string(b2) != string(b) {
			t.Errorf("%d: round trip\n got %s\nwant %s (%v)", i, b2, b, err)
		}
		switch v := r.(type) {
		case tools.Ok:
			ok, isOk := r2.(tools.Ok)
			if !isOk || !w.OK || w.Refusal != "" {
				t.Errorf("%d: Ok came back as %T (%+v)", i, r2, w)
			}
			want, _ := json.Marshal(v.Payload)
			if got, _ := json.Marshal(ok.Payload); string(got) != string(want) {
				t.Errorf("%d: payload %s, want %s", i, got, want)
			}
		case *tools.Refusal:
			ref, isRef := r2.(*tools.Refusal)
			if !isRef || ref.Name != v.Name || ref.Message != v.Message || w.OK {
				t.Errorf("%d: refusal came back as %#v", i, r2)
			}
		}
	}
	// The wire shape itself, as the model and the journal read it.
	b, _ := json.Marshal(tools.ToWire(tools.Ok{Payload: listing{Paths: []string{"x"}}}))
	if string(b) != `{"ok":true,"payload":{"paths":["x"]}}` {
		t.Errorf("ok wire: %s", b)
	}
	b, _ = json.Marshal(tools.ToWire(tools.Refuse(tools.FileMissing, "no a.go").With("path", "a.go")))
	if string(b) != `{"ok":false,"refusal":"file.missing","message":"no a.go","details":{"path":"a.go"}}` {
		t.Errorf("refusal wire: %s", b)
	}
}

type badMarshaler struct{}

func (badMarshaler) MarshalJSON() ([]byte, error) { return nil, errors.New("boom") }

type badText struct{ V string }

func (badText) MarshalText() ([]byte, error) { return nil, errors.New("no text") }

func TestUnencodablePayloadIsNeverAnEmptySuccess(t *testing.T) {
	payloads := map[string]any{
		"channel":        make(chan int),
		"function":       func() {},
		"+Inf":           math.Inf(1),
		"NaN":            math.NaN(),
		"nested NaN":     listing{Paths: nil, Bounds: tools.Bounds{}}, // replaced below
		"complex":        complex(1, 2),
		"marshaler":      badMarshaler{},
		"text marshaler": map[badText]int{{"k"}: 1},
		"invalid raw":    json.RawMessage(`{"half":`),
	}
	payloads["nested NaN"] = map[string]any{"ok": []any{1.0, math.NaN()}}
	for name, p := range payloads {
		t.Run(name, func(t *testing.T) {
			w := tools.ToWire(tools.Ok{Payload: p})
			if w.OK || len(w.Payload) != 0 {
				t.Fatalf("unencodable payload became a success: %+v", w)
			}
			if w.Refusal != tools.ToolFailed || !strings.Contains(w.Message, "encode") {
				t.Errorf("want tool.failed saying why, got %+v", w)
			}
		})
	}
}

func TestNoResultIsAFailureNotASuccess(t *testing.T) {
	var nilRefusal *tools.Refusal
	for name, r := range map[string]tools.Result{
		"nil result":  nil,
		"nil refusal": nilRefusal,
	} {
		w := tools.ToWire(r)
		if w.OK || w.Refusal != tools.ToolFailed {
			t.Errorf("%s: %+v", name, w)
		}
	}
	// *Ok satisfies Result too (the method set of a pointer includes the
	// value's); a handler that returns &Ok{} must still succeed.
	w := tools.ToWire(&tools.Ok{Payload: "x"})
	if !w.OK || string(w.Payload) != `"x"` {
		t.Errorf("&Ok{} on the wire: %+v", w)
	}
	var nilOk *tools.Ok
	if w := tools.ToWire(nilOk); w.OK || w.Refusal != tools.ToolFailed {
		t.Errorf("(*Ok)(nil) on the wire: %+v", w)
	}
}

func TestRefusalHelpers(t *testing.T) {
	r := tools.Refuse(tools.BashExit, "exit 2")
	if r.Details != nil {
		t.Error("Refuse allocated details")
	}
	if got := r.With("code", 2).With("code", 3); got != r || r.Details["code"] != 3 {
		t.Errorf("With does not chain on the same refusal: %v", r.Details)
	}
	var err error = r
	if err.Error() != "bash.exit: exit 2" {
		t.Errorf("Error() = %q", err.Error())
	}
	var back *tools.Refusal
	if !errors.As(wrap(err), &back) || back != r {
		t.Error("a wrapped refusal is not found with errors.As")
	}
}

func wrap(err error) error { return errors.Join(errors.New("context"), err) }

// refusalConstants parses refusals.go: the vocabulary is whatever that file
// declares, so a new constant is checked without editing this test.
func refusalConstants(t *testing.T) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "refusals.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "RefusalName" {
				t.Errorf("%s: constant without the RefusalName type", fset.Position(vs.Pos()))
				continue
			}
			for i, n := range vs.Names {
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Errorf("%s is not a string literal", n.Name)
					continue
				}
				v, _ := strconv.Unquote(lit.Value)
				out[n.Name] = v
			}
		}
	}
	return out
}

func TestRefusalVocabulary(t *testing.T) {
	consts := refusalConstants(t)
	if len(consts) < 30 {
		t.Fatalf("only %d refusal constants parsed", len(consts))
	}
	shape := regexp.MustCompile(`^[a-z]+\.[a-z_]+$`)
	seen := map[string]string{}
	for name, v := range consts {
		if !shape.MatchString(v) {
			t.Errorf("%s = %q does not match %s", name, v, shape)
		}
		if other, dup := seen[v]; dup {
			t.Errorf("%s and %s are both %q", name, other, v)
		}
		seen[v] = name
	}
	// The names DESIGN promises the model.
	for _, v := range []string{
		"file.stale", "file.missing", "file.ambiguous", "file.exists", "path.escape", "find.invalid",
		"bash.exit", "bash.timeout", "task.objective", "approval.denied", "approval.child_unattended",
		"approval.cancelled", "args.invalid", "rail.unavailable", "registry.collision", "tool.failed",
	} {
		if _, ok := seen[v]; !ok {
			t.Errorf("%q is not in the vocabulary", v)
		}
	}
	// The parsed values are the compiled ones.
	if consts["ArgsInvalid"] != string(tools.ArgsInvalid) || consts["ApprovalChildUnattended"] != string(tools.ApprovalChildUnattended) {
		t.Error("parsed refusals.go disagrees with the compiled constants")
	}
}
