package fs

import "bytes"

// byteRanks ranks every byte by how common it is in source code, 0 for the
// most common (space), 255 for the rarest: byteRanks[b]. It was counted
// once over Go, Python and C sources (about 50 MB: the Go tree, the Python
// standard library, /usr/include) and is used to pick the rarest byte of a
// literal to look for first (see literalFinder).
const byteRanks = "\xc5\xc6\xc7\xc8\xc9\xca\xcb\xcc\xcd\x0e\x09\xce\x89\xcf\xd0\xd1" +
	"\xd2\xd3\xd4\xd5\xd6\xd7\xd8\xd9\xda\xdb\xdc\xdd\xde\xdf\xe0\xe1" +
	"\x00\x54\x2c\x39\x5f\x55\x4f\x32\x12\x13\x29\x53\x14\x36\x1a\x1e" +
	"\x1b\x2e\x38\x40\x41\x42\x44\x52\x47\x45\x2d\x3b\x4b\x28\x43\x5d" +
	"\x5a\x23\x3c\x21\x31\x18\x37\x3a\x3f\x1d\x5c\x4d\x25\x35\x22\x27" +
	"\x2a\x5b\x20\x15\x19\x3d\x46\x51\x3e\x4c\x58\x48\x4a\x49\x5e\x08" +
	"\x59\x07\x24\x0b\x0d\x01\x0f\x1c\x16\x06\x56\x2b\x0c\x17\x03\x0a" +
	"\x10\x50\x04\x05\x02\x11\x2f\x30\x26\x1f\x4e\x33\x57\x34\x60\xe2" +
	"\x62\x84\x7b\xa7\x76\x69\x83\x91\x67\x92\x80\xb2\x86\xb4\xb8\xba" +
	"\xa8\xaf\xa5\x6d\x72\x87\x8e\x81\x6b\x64\xab\xb7\x68\x65\x7e\x8f" +
	"\xae\x7f\xad\xaa\x6f\x77\x98\x79\x99\x93\x74\x7c\x7a\xa9\xb5\xa4" +
	"\x94\x82\x8d\xa6\xa3\x96\xa0\x6e\x8a\x8c\x78\x73\x88\x95\x9d\x9a" +
	"\xe3\xe4\x63\x66\xa1\xac\xe5\xc0\xe6\xe7\x9b\xb1\xbf\xbc\x75\x7d" +
	"\x85\x9e\xe8\xb3\xe9\xea\xc1\xeb\x6c\x71\xec\xbd\xed\xc4\xee\xef" +
	"\xb6\x9c\x61\x9f\x90\xb9\x70\x97\x8b\xbb\xb0\xc2\xbe\xc3\xf0\xa2" +
	"\x6a\xf1\xf2\xf3\xf4\xf5\xf6\xf7\xf8\xf9\xfa\xfb\xfc\xfd\xfe\xff"

// literalFinder finds a literal by its rarest byte, as ripgrep does:
// bytes.IndexByte (SIMD) jumps to each occurrence of that byte and the
// literal is compared there. bytes.Index keys on the first byte, which in
// source code is often a common letter ("func main" on 'f'). When the rare
// byte turns out common in this data, it falls back to bytes.Index.
type literalFinder struct {
	lit  []byte
	rare byte
	off  int // index of rare in lit
}

func newLiteralFinder(lit []byte) literalFinder {
	f := literalFinder{lit: lit}
	for i, b := range lit {
		if byteRanks[b] > byteRanks[f.rare] || i == 0 {
			f.rare, f.off = b, i
		}
	}
	return f
}

// index returns the first index of the literal in data, or -1.
func (f literalFinder) index(data []byte) int {
	n := len(f.lit)
	if n <= 1 {
		return bytes.Index(data, f.lit)
	}
	misses := 0
	for pos := 0; pos+n <= len(data); {
		i := bytes.IndexByte(data[pos+f.off:len(data)-n+f.off+1], f.rare)
		if i < 0 {
			return -1
		}
		start := pos + i
		if bytes.Equal(data[start:start+n], f.lit) {
			return start
		}
		pos = start + 1
		// Many false hits per byte scanned: the rare byte is not rare
		// here; the general search is better.
		if misses++; misses > 8 && misses*64 > pos {
			if j := bytes.Index(data[pos:], f.lit); j >= 0 {
				return pos + j
			}
			return -1
		}
	}
	return -1
}
