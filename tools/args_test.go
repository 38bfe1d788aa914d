package tools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"staage/tools"
)

// fileEditSchema is shaped like the real file_edit's: what the gate and the
// validator see on the hottest path.
const fileEditSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1},
    "digest": {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"},
    "old": {"type": "string"},
    "new": {"type": "string"},
    "replaceAll": {"type": "boolean"},
    "opts": {"type": "object"},
    "list": {"type": "array"}
  },
  "required": ["path", "old", "new"],
  "additionalProperties": false
}`

func editTool(t testing.TB) *tools.Tool {
	t.Helper()
	d := tools.Declaration{RawName: "file_edit", Schema: json.RawMessage(fileEditSchema),
		Policy: tools.Required, Effect: tools.EffectReversible, Handler: okHandler}
	ts, rep := tools.NewToolset([]tools.Declaration{d})
	tool, ok := ts.Lookup("file_edit")
	if !ok {
		t.Fatalf("file_edit not offered: %+v", rep.Notes)
	}
	return tool
}

func TestBindHappy(t *testing.T) {
	tool := editTool(t)
	raw := "  {\"new\": \"b\",\n \"path\":\"a.go\", \"old\" : \"a\", \"replaceAll\": true, \"opts\": {\"z\": 1, \"a\": [3, 2, 1]}}\n"
	call, ref := tool.Bind("call-1", "lane-2", json.RawMessage(raw))
	if ref != nil {
		t.Fatalf("refused: %v", ref)
	}
	if call.ID != "call-1" || call.Lane != "lane-2" {
		t.Errorf("call identity %q %q", call.ID, call.Lane)
	}
	want := `{"new":"b","old":"a","opts":{"a":[3,2,1],"z":1},"path":"a.go","replaceAll":true}`
	if string(call.Args) != want {
		t.Errorf("canonical args\n got %s\nwant %s", call.Args, want)
	}
	var args struct {
		Path       string `json:"path"`
		Old, New   string
		ReplaceAll bool `json:"replaceAll"`
	}
	if err := call.Decode(&args); err != nil || args.Path != "a.go" || args.Old != "a" || args.New != "b" || !args.ReplaceAll {
		t.Errorf("Decode: %+v %v", args, err)
	}
}

func TestBindRefusals(t *testing.T) {
	tool := editTool(t)
	cases := []struct {
		name string
		raw  string
		says []string // substrings the model must be able to read
	}{
		// Duplicate and case-variant keys: encoding/json would take the last.
		{"case variant", `{"path":"ok","PATH":"/etc/passwd","old":"a","new":"b"}`, []string{"path", "PATH", "case"}},
		{"exact duplicate", `{"path":"ok","path":"/etc/passwd","old":"a","new":"b"}`, []string{"duplicate", "path"}},
		{"duplicate through an escape", `{"path":"ok","p\u0061th":"/etc/passwd","old":"a","new":"b"}`, []string{"duplicate"}},
		{"mixed case variant", `{"Path":"ok","pAtH":"/etc/passwd","old":"a","new":"b"}`, []string{"case"}},
		// Unicode case folding as encoding/json does it: the long s and
		// the Kelvin sign match 's' and 'k'.
		{"duplicate boolean", `{"path":"ok","old":"a","new":"b","replaceAll":false,"replaceAll":true}`, []string{"duplicate"}},
		{"long s variant", "{\"path\":\"a\",\"old\":\"x\",\"new\":\"y\",\"opts\":{\"mask\":1,\"ma\u017fk\":2}}", []string{"case"}},
		{"kelvin variant", "{\"path\":\"a\",\"old\":\"x\",\"new\":\"y\",\"opts\":{\"k\":1,\"\u212a\":2}}", []string{"case"}},
		{"nested duplicate", `{"path":"a","old":"x","new":"y","opts":{"a":1,"a":2}}`, []string{"duplicate"}},
		{"duplicate in an array's object", `{"path":"a","old":"x","new":"y","list":[{"x":1},{"x":1,"X":2}]}`, []string{"case"}},
		// Schema misses.
		{"missing required", `{"path":"a","old":"x"}`, []string{"new", "schema"}},
		{"unknown key", `{"path":"a","old":"x","new":"y","force":true}`, []string{"force"}},
		{"wrong type", `{"path":7,"old":"x","new":"y"}`, []string{"/path", "string"}},
		{"pattern", `{"path":"a","old":"x","new":"y","digest":"md5:1"}`, []string{"/digest"}},
		{"empty path", `{"path":"","old":"x","new":"y"}`, []string{"/path"}},
		// Not an arguments object.
		{"malformed", `{"path":`, []string{"malformed"}},
		{"unquoted key", `{path:"a"}`, []string{"malformed"}},
		{"trailing comma", `{"path":"a","old":"x","new":"y",}`, []string{"malformed"}},
		{"trailing comma in array", `{"path":"a","old":"x","new":"y","list":[1,]}`, []string{"malformed"}},
		{"leading zero", `{"path":"a","old":"x","new":"y","list":[01]}`, []string{"malformed"}},
		{"NaN", `{"path":"a","old":"x","new":"y","list":[NaN]}`, []string{"malformed"}},
		{"single quotes", `{'path':'a'}`, []string{"malformed"}},
		{"second object", `{"path":"a","old":"x","new":"y"} {"path":"/etc/passwd"}`, []string{"trailing"}},
		{"trailing garbage", `{"path":"a","old":"x","new":"y"}x`, []string{"malformed"}},
		{"trailing bracket", `{"path":"a","old":"x","new":"y"}]`, []string{"malformed"}},
		{"array", `[{"path":"a","old":"x","new":"y"}]`, []string{"object"}},
		{"string", `"{\"path\":\"a\"}"`, []string{"object"}},
		{"number", `1`, []string{"object"}},
		{"null", `null`, []string{"object"}},
		{"true", `true`, []string{"object"}},
		{"invalid UTF-8", "{\"path\":\"\xff\xfe\",\"old\":\"x\",\"new\":\"y\"}", []string{"UTF-8"}},
		{"invalid UTF-8 key", "{\"pa\xc0th\":\"a\"}", []string{"UTF-8"}},
		{"too deep", `{"path":"a","old":"x","new":"y","list":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, []string{"deeper"}},
		{"form feed around", "\f{\"path\":\"a\",\"old\":\"x\",\"new\":\"y\"}\v", []string{"malformed"}},
		{"no-break space around", "\u00a0{\"path\":\"a\",\"old\":\"x\",\"new\":\"y\"}", []string{"malformed"}},
		{"BOM", "\ufeff{\"path\":\"a\",\"old\":\"x\",\"new\":\"y\"}", []string{"malformed"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			call, ref := tool.Bind("1", "main", json.RawMessage(c.raw))
			if ref == nil {
				t.Fatalf("accepted as %s", call.Args)
			}
			if ref.Name != tools.ArgsInvalid {
				t.Errorf("refusal %q, want args.invalid", ref.Name)
			}
			if !strings.Contains(ref.Message, "file_edit") {
				t.Errorf("message does not name the tool: %q", ref.Message)
			}
			for _, s := range c.says {
				if !strings.Contains(ref.Message, s) {
					t.Errorf("message %q does not say %q", ref.Message, s)
				}
			}
			if strings.Contains(ref.Message, "*jsonschema") || strings.Contains(ref.Message, "%!") {
				t.Errorf("message leaks Go internals: %q", ref.Message)
			}
			if call.Args != nil {
				t.Errorf("a refused bind returned args %s", call.Args)
			}
		})
	}
}

func TestBindSchemaMissCarriesTheSchema(t *testing.T) {
	tool := editTool(t)
	_, ref := tool.Bind("1", "main", json.RawMessage(`{"path":"a"}`))
	if ref == nil {
		t.Fatal("accepted")
	}
	s, ok := ref.Details["schema"].(json.RawMessage)
	if !ok || string(s) != string(tool.Schema) {
		t.Errorf("details.schema = %v, want the tool's canonical schema", ref.Details["schema"])
	}
	// One line per failing location, readable without Go knowledge.
	if !strings.Contains(ref.Message, "/: ") {
		t.Errorf("message %q does not locate the miss", ref.Message)
	}
}

func TestStrictDecodeSizeAndDepthLimits(t *testing.T) {
	// Exactly at the byte limit is fine; one byte over is refused before
	// any parsing.
	pad := tools.MaxArgsBytes - len(`{"s":""}`)
	at := []byte(`{"s":"` + strings.Repeat("a", pad) + `"}`)
	if len(at) != tools.MaxArgsBytes {
		t.Fatalf("fixture is %d bytes", len(at))
	}
	if _, _, err := tools.StrictDecode(at); err != nil {
		t.Errorf("at the limit: %v", err)
	}
	over := append(bytes.Clone(at[:len(at)-2]), 'a', '"', '}')
	if _, _, err := tools.StrictDecode(over); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("over the limit: %v", err)
	}
	// Whitespace counts too: padding is not a way past the limit.
	ws := append([]byte("{}"), bytes.Repeat([]byte(" "), tools.MaxArgsBytes)...)
	if _, _, err := tools.StrictDecode(ws); err == nil {
		t.Error("whitespace-padded input over the limit accepted")
	}

	nest := func(n int, open, close string) []byte {
		return []byte(`{"a":` + strings.Repeat(open, n) + strings.Repeat(close, n) + `}`)
	}
	// The top-level object is depth 0; the value of "a" is depth 1.
	if _, _, err := tools.StrictDecode(nest(tools.MaxArgsDepth, "[", "]")); err != nil {
		t.Errorf("nesting at the limit: %v", err)
	}
	if _, _, err := tools.StrictDecode(nest(tools.MaxArgsDepth+1, "[", "]")); err == nil {
		t.Error("nesting over the limit accepted")
	}
	objs := []byte(`{"a":` + strings.Repeat(`{"a":`, tools.MaxArgsDepth+1) + `1` + strings.Repeat("}", tools.MaxArgsDepth+2))
	if _, _, err := tools.StrictDecode(objs); err == nil {
		t.Error("object nesting over the limit accepted")
	}
	// Hostile depth is refused without exhausting the stack.
	deep := []byte(`{"a":` + strings.Repeat("[", 1<<20) + strings.Repeat("]", 1<<20) + `}`)
	if _, _, err := tools.StrictDecode(deep); err == nil {
		t.Error("a million levels accepted")
	}
}

func TestStrictDecodeCanonicalForm(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{}`, `{}`},
		{``, `{}`}, // providers send no text for a call without arguments
		{" \n\t ", `{}`},
		{`{"b":1,"a":{"d":[],"c":{}}}`, `{"a":{"c":{},"d":[]},"b":1}`},
		// Numbers are kept exactly as written (no float64 round trip), except that
		// integral values lose a fraction or exponent, so they decode into ints.
		{`{"n":12345678901234567890123456789}`, `{"n":12345678901234567890123456789}`},
		{`{"n":9007199254740993}`, `{"n":9007199254740993}`},
		{`{"f":0.1000000000000000055511151231257827}`, `{"f":0.1000000000000000055511151231257827}`},
		{`{"e":1e400,"m":-0,"x":1.0,"y":1E+2}`, `{"e":1e400,"m":-0,"x":1,"y":100}`},
		{`{"s":"\u00e9\ud83d\ude00"}`, `{"s":"é😀"}`},
		{`{"k":null,"t":true,"f":false}`, `{"f":false,"k":null,"t":true}`},
		{`{"Path":1,"path2":2}`, `{"Path":1,"path2":2}`}, // distinct keys stay distinct
	}
	for _, c := range cases {
		canon, val, err := tools.StrictDecode([]byte(c.in))
		if err != nil {
			t.Errorf("StrictDecode(%q): %v", c.in, err)
			continue
		}
		if string(canon) != c.want {
			t.Errorf("StrictDecode(%q) = %s, want %s", c.in, canon, c.want)
		}
		if _, ok := val.(map[string]any); !ok {
			t.Errorf("value of %q is %T", c.in, val)
		}
		// Canonical is a fixed point.
		again, _, err := tools.StrictDecode(canon)
		if err != nil || !bytes.Equal(again, canon) {
			t.Errorf("canonical %s re-decodes to %s, %v", canon, again, err)
		}
	}
	// Markup is escaped in the canonical form but decodes to the same text.
	canon, _, err := tools.StrictDecode([]byte(`{"s":"<script>&amp;</script>"}`))
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ S string }
	if err := json.Unmarshal(canon, &v); err != nil || v.S != "<script>&amp;</script>" {
		t.Errorf("markup round trip: %q %v", v.S, err)
	}
}

func TestStrictDecodeValueMatchesCanonical(t *testing.T) {
	in := `{"z":[1,2.5,{"y":"x"}],"a":true}`
	canon, val, err := tools.StrictDecode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(canon))
	dec.UseNumber()
	var fromCanon any
	if err := dec.Decode(&fromCanon); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(val, fromCanon) {
		t.Errorf("validated value %#v differs from what the canonical form decodes to %#v", val, fromCanon)
	}
}

func TestCanonicalJSON(t *testing.T) {
	a, err := tools.CanonicalJSON([]byte(`{ "b" : [1, 2], "a":"x" }`))
	if err != nil || string(a) != `{"a":"x","b":[1,2]}` {
		t.Errorf("CanonicalJSON = %s, %v", a, err)
	}
	for _, bad := range []string{``, `{`, `{} {}`, `{}x`} {
		if _, err := tools.CanonicalJSON([]byte(bad)); err == nil {
			t.Errorf("CanonicalJSON(%q) accepted", bad)
		}
	}
}

// TestFoldedKeyCannotSmuggleAValue is the attack the strictness exists for,
// on a schema that does not close its properties (an MCP server's, say):
// encoding/json would hand the handler the second, hidden value.
func TestFoldedKeyCannotSmuggleAValue(t *testing.T) {
	d := decl("srv", "open")
	d.Schema = json.RawMessage(`{"type":"object","properties":{"task":{"type":"string"}}}`)
	ts, _ := tools.NewToolset([]tools.Declaration{d})
	tool := mustLookup(t, ts, "srv__open")
	for _, raw := range []string{
		`{"task":"ok","TASK":"/etc/passwd"}`,
		"{\"task\":\"ok\",\"ta\u017fk\":\"/etc/passwd\"}", // ſ folds to s
		"{\"tas\u212a\":\"/etc/passwd\",\"task\":\"ok\"}", // Kelvin sign folds to k
	} {
		call, ref := tool.Bind("1", "main", json.RawMessage(raw))
		if ref == nil {
			var v struct {
				Task string `json:"task"`
			}
			_ = call.Decode(&v)
			t.Errorf("%s accepted; the handler would read task=%q", raw, v.Task)
		}
	}
	// A key that merely contains such a letter, alone, is fine.
	if _, ref := tool.Bind("1", "main", json.RawMessage("{\"ta\u017fk\":\"x\"}")); ref != nil {
		t.Errorf("a lone unusual key refused: %v", ref)
	}
}

// TestDispatchRunsTheValidatedCall drives a call the way the loop does:
// look the name up, bind the raw arguments, run the tool's own handler.
func TestDispatchRunsTheValidatedCall(t *testing.T) {
	var seen []tools.Call
	h := tools.HandlerFunc(func(ctx context.Context, call tools.Call) tools.Result {
		seen = append(seen, call)
		return tools.Ok{Payload: "done"}
	})
	d := decl("srv", "x")
	d.Handler = h
	ts, _ := tools.NewToolset([]tools.Declaration{d, decl("", "other")})
	tool := mustLookup(t, ts, "srv__x")
	call, ref := tool.Bind("id-9", "lane-1", json.RawMessage(`{ "q" : "hello" }`))
	if ref != nil {
		t.Fatal(ref)
	}
	res := tool.Handler().Run(context.Background(), call)
	if w := tools.ToWire(res); !w.OK || string(w.Payload) != `"done"` {
		t.Errorf("result %+v", w)
	}
	if len(seen) != 1 || string(seen[0].Args) != `{"q":"hello"}` || seen[0].ID != "id-9" || seen[0].Lane != "lane-1" {
		t.Errorf("handler saw %+v", seen)
	}
}
