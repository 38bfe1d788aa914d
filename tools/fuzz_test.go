package tools_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

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
	return v
}

// hasFoldedDuplicate is an independent check (strings.EqualFold, pairwise)
// for two keys of one object that encoding/json would match to one field.
func hasFoldedDuplicate(raw []byte) bool {
	dup, _ := walkDup(json.NewDecoder(bytes.NewReader(raw)))
	return dup
}

func walkDup(dec *json.Decoder) (bool, error) {
	tok, err := dec.Token()
	if err != nil {
		return false, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return false, nil
	}
	var keys []string
	for dec.More() {
		if d == '{' {
			kt, err := dec.Token()
			if err != nil {
				return false, err
			}
			k, _ := kt.(string)
			for _, p := range keys {
				if strings.EqualFold(p, k) {
					return true, nil
				}
			}
			keys = append(keys, k)
		}
		if dup, err := walkDup(dec); dup || err != nil {
			return dup, err
		}
	}
	_, err = dec.Token()
	return false, err
}
