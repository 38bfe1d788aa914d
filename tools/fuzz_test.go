package tools_test

import (
	"bytes"
	"encoding/json"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"staage/tools"
)

// FuzzStrictDecode: StrictDecode never panics; what it accepts is valid JSON
// whose canonical form is a fixed point and carries the same data; and it
// never accepts an object with two keys encoding/json would confuse. The seed
// corpus is under testdata/fuzz/FuzzStrictDecode; run longer with
// go test -fuzz FuzzStrictDecode ./tools.
func FuzzStrictDecode(f *testing.F) {
	f.Add([]byte(`{"path":"ok","PATH":"/etc/passwd"}`))
	f.Add([]byte(`{"a":{"b":[1,2,{"c":"d"}]},"e":1.50}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		canon, val, err := tools.StrictDecode(raw)
		if err != nil {
			if canon != nil || val != nil {
				t.Fatalf("refusal returned data: %s %v", canon, val)
			}
			// Nor does it refuse what it must take: a valid, UTF-8, small
			// enough, shallow enough object without confusable keys.
			trimmed := bytes.Trim(raw, " \t\r\n")
			if len(raw) <= tools.MaxArgsBytes && len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(raw) && utf8.Valid(raw) {
				if dup, depth := inspect(raw); !dup && depth <= tools.MaxArgsDepth {
					t.Fatalf("refused a valid arguments object %q: %v", raw, err)
				}
			}
			return
		}
		if len(raw) > tools.MaxArgsBytes {
			t.Fatalf("accepted %d bytes", len(raw))
		}
		blank := len(bytes.Trim(raw, " \t\r\n")) == 0
		if !blank && !json.Valid(raw) {
			t.Fatalf("accepted invalid JSON %q", raw)
		}
		if _, ok := val.(map[string]any); !ok {
			t.Fatalf("accepted a %T top level", val)
		}
		if !blank && hasFoldedDuplicate(raw) {
			t.Fatalf("accepted duplicate or case-variant keys: %q", raw)
		}
		again, val2, err := tools.StrictDecode(canon)
		if err != nil {
			t.Fatalf("canonical %s does not re-decode: %v", canon, err)
		}
		if !bytes.Equal(again, canon) {
			t.Fatalf("canonical is not a fixed point:\n%s\n%s", canon, again)
		}
		if !reflect.DeepEqual(val, val2) {
			t.Fatalf("values differ across the canonical form: %#v vs %#v", val, val2)
		}
		if !blank {
			// Same data as a plain decode of the input (which, with no
			// duplicates, has nothing to choose between).
			if want := plainDecode(t, raw); !reflect.DeepEqual(want, plainDecode(t, canon)) {
				t.Fatalf("canonical %s changed the data of %q", canon, raw)
			}
		}
	})
}

func plainDecode(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("plain decode of %q: %v", b, err)
	}
	return numbersByValue(v)
}

// numbersByValue replaces each number by its exact value, so "1.0" and "1"
// (which the canonical form writes as an integer) compare equal, and -0 and
// 0 too.
func numbersByValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = numbersByValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = numbersByValue(e)
		}
		return out
	case json.Number:
		f, ok := new(big.Float).SetPrec(512).SetString(string(x))
		if !ok {
			return string(x)
		}
		if f.Sign() == 0 {
			return "0"
		}
		return f.Text('e', 100)
	}
	return v
}

// hasFoldedDuplicate is an independent check (strings.EqualFold, pairwise)
// for two keys of one object that encoding/json would match to one field.
func hasFoldedDuplicate(raw []byte) bool {
	dup, _ := inspect(raw)
	return dup
}

// inspect walks valid JSON and reports a folded duplicate key and the
// deepest value (the top level is depth 0).
func inspect(raw []byte) (dup bool, depth int) {
	w := walker{dec: json.NewDecoder(bytes.NewReader(raw))}
	_ = w.walk(0)
	return w.dup, w.max
}

type walker struct {
	dec *json.Decoder
	dup bool
	max int
}

func (w *walker) walk(depth int) error {
	w.max = max(w.max, depth)
	tok, err := w.dec.Token()
	if err != nil {
		return err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	var keys []string
	for w.dec.More() {
		if d == '{' {
			kt, err := w.dec.Token()
			if err != nil {
				return err
			}
			k, _ := kt.(string)
			for _, p := range keys {
				if strings.EqualFold(p, k) {
					w.dup = true
				}
			}
			keys = append(keys, k)
		}
		if err := w.walk(depth + 1); err != nil {
			return err
		}
	}
	_, err = w.dec.Token()
	return err
}
