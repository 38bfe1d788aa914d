package markdown

import "strings"

// Blocks caches the rendering of one growing markdown text block by block.
// A streamed answer is split at blank lines outside code fences; blocks
// that did not change since the last frame keep their rendering, so a
// frame of a long answer re-renders only its last block instead of the
// whole text (glamour is linear in its input: a 20 KB answer costs ~170 ms
// in one piece). The zero value is ready to use.
type Blocks struct {
	width int
	srcs  []string
	outs  [][]string
}

// Render renders md at width through r, reusing unchanged blocks.
func (b *Blocks) Render(r *Renderer, md string, width int) []string {
	if b.width != width {
		b.width, b.srcs, b.outs = width, nil, nil
	}
	blocks := Split(md)
	srcs := make([]string, len(blocks))
	outs := make([][]string, len(blocks))
	var lines []string
	for i, src := range blocks {
		srcs[i] = src
		if i < len(b.srcs) && b.srcs[i] == src {
			outs[i] = b.outs[i]
		} else {
			outs[i] = r.Render(src, width)
		}
		if len(outs[i]) == 0 {
			continue
		}
		if len(lines) > 0 {
			lines = append(lines, "")
		}
		lines = append(lines, outs[i]...)
	}
	b.srcs, b.outs = srcs, outs
	return lines
}

// Split cuts markdown into blocks at blank lines that are not inside a
// fenced code block. Joining the blocks with blank lines gives back the
// same document (up to runs of blank lines).
func Split(md string) []string {
	var blocks []string
	var cur []string
	fence := ""
	flush := func() {
		if len(cur) > 0 {
			blocks = append(blocks, strings.Join(cur, "\n"))
			cur = nil
		}
	}
	for _, line := range strings.Split(md, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case fence != "":
			cur = append(cur, line)
			if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
				fence = ""
			}
			continue
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			fence = t[:3]
			cur = append(cur, line)
			continue
		case t == "":
			flush()
			continue
		}
		cur = append(cur, line)
	}
	flush()
	return blocks
}
