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
		`[0-9]{4}-[0-9]{2}`:    "-", // one rare byte is worth it
		`a[0-9]+`:              "",  // one common byte is not
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

func TestLiteralFinder(t *testing.T) {
	f := newLiteralFinder([]byte("func main"))
	if f.rare == 'f' || f.rare == ' ' {
		t.Fatalf("rare byte %q is a common one", f.rare)
	}
	texts := []string{"", "func mai", "func main", "xx func main yy", "func mainfunc main",
		strings.Repeat("m", 1000) + "func main", strings.Repeat("func mai ", 200) + "func main!"}
	for _, lit := range []string{"func main", "m", "ab", "zzzz", "Context"} {
		f := newLiteralFinder([]byte(lit))
		for _, text := range texts {
			if got, want := f.index([]byte(text)), strings.Index(text, lit); got != want {
				t.Errorf("index(%q, %q) = %d, want %d", text, lit, got, want)
			}
		}
	}
}

func FuzzLiteralFinder(f *testing.F) {
	f.Add("func main", "package main\nfunc main() {}\n")
	f.Fuzz(func(t *testing.T, lit, text string) {
		if lit == "" {
			return
		}
		if got, want := newLiteralFinder([]byte(lit)).index([]byte(text)), strings.Index(text, lit); got != want {
			t.Fatalf("index(%q, %q) = %d, want %d", text, lit, got, want)
		}
	})
}
