package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// MaxArgsBytes bounds one call's argument JSON. A model that emits more is
// refused, not parsed.
const MaxArgsBytes = 4 << 20

// MaxArgsDepth bounds nesting, so hostile input cannot exhaust the stack.
const MaxArgsDepth = 64

// Bind decodes raw arguments once, refuses duplicate and case-variant keys,
// validates the value against the tool's schema and returns the Call the
// handler will run. Every failure is an args.invalid refusal for the model.
func (t *Tool) Bind(id, lane string, raw json.RawMessage) (Call, *Refusal) {
	canon, val, err := StrictDecode(raw)
	if err != nil {
		return Call{}, Refuse(ArgsInvalid, fmt.Sprintf("arguments for %s: %v", t.Name, err))
	}
	if err := t.schema.Validate(val); err != nil {
		return Call{}, Refuse(ArgsInvalid, fmt.Sprintf("arguments for %s do not match its schema: %s", t.Name, schemaMessage(err))).
			With("schema", json.RawMessage(t.Schema))
	}
	return Call{ID: id, Lane: lane, Args: canon}, nil
}

func schemaMessage(err error) string {
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		// The flattened basic output names each failing location on one
		// line each: readable for a model, no Go types.
		var lines []string
		for _, u := range ve.BasicOutput().Errors {
			if u.Error == nil {
				continue
			}
			msg := u.Error.String()
			if msg == "" {
				continue
			}
			loc := u.InstanceLocation
			if loc == "" {
				loc = "/"
			}
			lines = append(lines, loc+": "+msg)
		}
		if len(lines) > 0 {
			return strings.Join(lines, "; ")
		}
	}
	return err.Error()
}

// StrictDecode parses an arguments object. It returns the canonical encoding
// (sorted keys, numbers kept exactly) and the decoded value for the schema
// validator. It refuses: anything over MaxArgsBytes or MaxArgsDepth, invalid
// UTF-8, a top level that is not an object, trailing data, and objects that
// carry the same key twice or two keys that differ only in case (encoding/json
// would silently take the last, case-insensitively).
func StrictDecode(raw []byte) (json.RawMessage, any, error) {
	if len(raw) > MaxArgsBytes {
		return nil, nil, fmt.Errorf("%d bytes is over the %d byte limit", len(raw), MaxArgsBytes)
	}
	// Only JSON's own whitespace: bytes.TrimSpace would also drop \f, \v and
	// Unicode spaces, and accept text that is not JSON.
	trimmed := bytes.Trim(raw, " \t\r\n")
	if len(trimmed) == 0 {
		trimmed = []byte("{}")
	}
	if !utf8.Valid(trimmed) {
		return nil, nil, errors.New("not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("malformed JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, errors.New("malformed JSON: trailing data after the arguments object")
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, nil, errors.New("arguments must be a JSON object")
	}
	canon, err := json.Marshal(v)
	if err != nil {
		return nil, nil, fmt.Errorf("re-encode: %w", err)
	}
	return canon, v, nil
}

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > MaxArgsDepth {
		return nil, fmt.Errorf("nested deeper than %d", MaxArgsDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, errors.New("unexpected end of input")
		}
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := map[string]any{}
			folded := map[string]string{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key is not a string")
				}
				if _, dup := obj[key]; dup {
					return nil, fmt.Errorf("duplicate key %q", key)
				}
				low := foldKey(key)
				if other, dup := folded[low]; dup {
					return nil, fmt.Errorf("keys %q and %q differ only in case", other, key)
				}
				folded[low] = key
				val, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				obj[key] = val
			}
			if _, err := dec.Token(); err != nil { // '}'
				return nil, err
			}
			return obj, nil
		case '[':
			arr := []any{}
			for dec.More() {
				val, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				arr = append(arr, val)
			}
			if _, err := dec.Token(); err != nil { // ']'
				return nil, err
			}
			return arr, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case json.Number:
		return integralForm(t), nil
	default:
		return t, nil
	}
}

// integralForm writes an integral number without a fraction or exponent
// ("100.0" and "1e2" become "100"), so a value a schema accepts as an integer
// also decodes into a Go int. Other numbers are kept exactly as written.
func integralForm(n json.Number) json.Number {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		return n
	}
	f, ok := new(big.Float).SetPrec(256).SetString(s)
	if !ok || !f.IsInt() {
		return n
	}
	i, acc := f.Int64()
	if acc != big.Exact {
		return n
	}
	return json.Number(strconv.FormatInt(i, 10))
}

// foldKey folds a key the way encoding/json matches keys to struct fields
// (bytes.EqualFold: each rune becomes the smallest rune of its case-folding
// orbit). strings.ToLower is not enough: "ſ" (U+017F) and "K" (U+212A) match
// "s" and "k" in encoding/json but not under ToLower, so {"task":..,"taſk":..}
// would slip past as two keys and decode as one.
func foldKey(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		for {
			f := unicode.SimpleFold(r)
			if f <= r {
				r = f
				break
			}
			r = f
		}
		b.WriteRune(r)
	}
	return b.String()
}

// CanonicalJSON re-encodes any JSON document with sorted keys and exact
// numbers, for digests. It does not apply the argument-strictness rules.
func CanonicalJSON(raw []byte) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data")
	}
	return json.Marshal(v)
}
