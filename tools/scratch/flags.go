package scratch

import (
	"fmt"
	"regexp"
	"strings"

	"staage/tools"
)

// spec says which flags one command may take. Anything not listed is
// refused: following links (-L), reading name lists from files
// (--files0-from, file -f), loading magic (file -m), decompressing with
// helpers (file -z), following growth (tail -f) or writing (file -C).
type spec struct {
	letters string          // short flags without a value; clusterable
	long    []string        // long flags without a value
	valued  map[string]kind // flags that take a value (short "-n" or long "--lines")
}

type kind int

const (
	anyValue kind = iota
	count         // a line or byte count: [+-]digits with an optional unit
)

var countRe = regexp.MustCompile(`^[+-]?[0-9]{1,12}[kKMGTbB]?$`)

var specs = map[string]spec{
	"ls": {letters: "aAlhRrtS1dFinpgoGCxmUvXQsk",
		long: []string{"--all", "--almost-all", "--human-readable", "--recursive", "--reverse", "--size",
			"--classify", "--inode", "--numeric-uid-gid", "--directory", "--full-time", "--no-group"},
		valued: map[string]kind{"--sort": anyValue, "--time-style": anyValue}},
	"cat": {letters: "nbAEsTtuve",
		long: []string{"--number", "--number-nonblank", "--show-all", "--show-ends", "--show-tabs",
			"--squeeze-blank", "--show-nonprinting"}},
	"wc":   {letters: "lwcmL", long: []string{"--lines", "--words", "--bytes", "--chars", "--max-line-length"}},
	"head": {letters: "qvz", long: []string{"--quiet", "--silent", "--verbose", "--zero-terminated"}, valued: map[string]kind{"-n": count, "-c": count, "--lines": count, "--bytes": count}},
	"tail": {letters: "qvz", long: []string{"--quiet", "--silent", "--verbose", "--zero-terminated"}, valued: map[string]kind{"-n": count, "-c": count, "--lines": count, "--bytes": count}},
	"file": {letters: "bikNnr0", long: []string{"--brief", "--mime", "--mime-type", "--mime-encoding", "--keep-going", "--raw", "--no-pad", "--print0", "--no-buffer"}},
	"stat": {letters: "ft", long: []string{"--file-system", "--terse"}, valued: map[string]kind{"-c": anyValue, "--format": anyValue, "--printf": anyValue}},
}

// split sorts args into flags (rebuilt in a canonical, unambiguous form) and
// paths. After "--" everything is a path.
func (s spec) split(args []string) (flags, paths []string, ref *tools.Refusal) {
	deny := func(f string) *tools.Refusal {
		return tools.Refuse(tools.ScratchDenied, fmt.Sprintf("flag %q is not allowed", f)).With("flag", f)
	}
	value := func(flag, v string) *tools.Refusal {
		if s.valued[flag] == count && !countRe.MatchString(v) {
			return tools.Refuse(tools.ScratchDenied, fmt.Sprintf("%s needs a number, not %q", flag, v))
		}
		if strings.ContainsRune(v, 0) {
			return tools.Refuse(tools.ScratchDenied, "a value holds a NUL byte")
		}
		return nil
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			paths = append(paths, args[i+1:]...)
			return flags, paths, nil
		case a == "-":
			return nil, nil, tools.Refuse(tools.ScratchDenied, "reading standard input is not allowed")
		case strings.HasPrefix(a, "--"):
			name, v, hasV := strings.Cut(a, "=")
			if _, ok := s.valued[name]; ok {
				if !hasV {
					if i+1 >= len(args) {
						return nil, nil, tools.Refuse(tools.ScratchDenied, name+" needs a value")
					}
					i++
					v = args[i]
				}
				if r := value(name, v); r != nil {
					return nil, nil, r
				}
				flags = append(flags, name+"="+v)
				continue
			}
			if hasV || !contains(s.long, name) {
				return nil, nil, deny(a)
			}
			flags = append(flags, a)
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for j := 1; j < len(a); j++ {
				c := a[j]
				if strings.IndexByte(s.letters, c) >= 0 && c != 0 {
					flags = append(flags, "-"+string(c))
					continue
				}
				short := "-" + string(c)
				if _, ok := s.valued[short]; !ok {
					return nil, nil, deny(short)
				}
				v := a[j+1:]
				if v == "" {
					if i+1 >= len(args) {
						return nil, nil, tools.Refuse(tools.ScratchDenied, short+" needs a value")
					}
					i++
					v = args[i]
				}
				if r := value(short, v); r != nil {
					return nil, nil, r
				}
				flags = append(flags, short, v)
				break
			}
		default:
			paths = append(paths, a)
		}
	}
	return flags, paths, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
