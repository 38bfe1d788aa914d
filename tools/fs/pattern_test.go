package fs

import (
	"strings"
	"testing"
)

func TestRequiredLiteral(t *testing.T) {
	cases := map[string]string{
		`func \w+\(`:           "func ",
		`err(or)?\s*!= nil`:    "!= nil",
		`(?i)abc`:              "",
		`a|b`:                  "",
		`(foo)+bar`:            "foo",
		`x{2,}yz`:              "yz",
		`[ab]cd`:               "cd",
		`prefix.*suffixlonger`: "suffixlonger",
	}
	for p, want := range cases {
		q, err := compileQuery(p, false)
		if err != nil {
			t.Fatal(err)
		}
		if string(q.required) != want {
			t.Errorf("%s: required %q, want %q", p, q.required, want)
		}
	}
}

func TestClipLine(t *testing.T) {
	line := []byte("0123456789abcdefghij")
	if s, c := clipLine(line, 0, 1, 100); c || s != string(line) {
		t.Fatal("short line clipped")
	}
	if s, c := clipLine(line, 15, 17, 8); !c || len(s) > 8 || !strings.Contains(s, "fg") {
		t.Fatalf("window %q", s)
	}
	if s, _ := clipLine([]byte("abc\r"), 0, 1, 10); s != "abc" {
		t.Fatalf("cr %q", s)
	}
}
