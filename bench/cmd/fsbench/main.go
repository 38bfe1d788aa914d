// Command fsbench runs file_find and file_search the way the agent loop
// does (schema-validated arguments, Bind, Handler().Run) over a directory,
// paging through every result, and prints the results like ripgrep/fd do
// (path:line:text, or one path a line), so the three can be timed side by
// side by bench/search.sh.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"staage/tools"
	fstools "staage/tools/fs"
	"staage/tools/workspace"
)

func main() {
	dir := flag.String("dir", ".", "workspace root (default: the current directory)")
	mode := flag.String("mode", "search", "search or find")
	pattern := flag.String("pattern", "", "regexp, literal or glob")
	literal := flag.Bool("literal", false, "literal search")
	glob := flag.String("glob", "", "search only files matching this glob")
	onePass := flag.Bool("onepass", false, "search: one unbounded page through fs.Search (the engine alone), not the tool's pages")
	flag.Parse()
	var err error
	if *onePass {
		err = searchOnePass(*dir, *pattern, *literal, *glob)
	} else {
		err = run(*dir, *mode, *pattern, *literal, *glob)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fsbench:", err)
		os.Exit(1)
	}
}

func run(dir, mode, pattern string, literal bool, glob string) error {
	ws, err := workspace.Open(dir)
	if err != nil {
		return err
	}
	defer ws.Close()
	ts, rep := tools.NewToolset(fstools.Declarations(ws))
	if len(rep.Notes) > 0 {
		return fmt.Errorf("toolset: %+v", rep.Notes)
	}
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	defer out.Flush()
	name := "file_" + mode
	tool, ok := ts.Lookup(name)
	if !ok {
		return fmt.Errorf("no tool %s", name)
	}
	args := map[string]any{"pattern": pattern}
	if mode == "search" {
		args["limit"] = fstools.MaxSearchLimit
		if literal {
			args["literal"] = true
		}
		if glob != "" {
			args["glob"] = glob
		}
	} else {
		args["limit"] = fstools.MaxFindLimit
	}
	ctx := context.Background()
	for page := 0; ; page++ {
		raw, _ := json.Marshal(args)
		call, ref := tool.Bind(fmt.Sprint(page), "bench", raw)
		if ref != nil {
			return ref
		}
		res := tool.Handler().Run(ctx, call)
		ok, isOk := res.(tools.Ok)
		if !isOk {
			return res.(*tools.Refusal)
		}
		var b tools.Bounds
		switch p := ok.Payload.(type) {
		case fstools.SearchPayload:
			for _, m := range p.Matches {
				fmt.Fprintf(out, "%s:%d:%s\n", m.Path, m.Line, m.Text)
			}
			b = p.Bounds
		case fstools.FindPayload:
			for _, path := range p.Paths {
				out.WriteString(path)
				out.WriteByte('\n')
			}
			b = p.Bounds
		}
		if b.NextCursor == "" {
			return nil
		}
		args["cursor"] = b.NextCursor
	}
}

func searchOnePass(dir, pattern string, literal bool, glob string) error {
	ws, err := workspace.Open(dir)
	if err != nil {
		return err
	}
	defer ws.Close()
	p, err := fstools.Search(context.Background(), ws, pattern, literal, glob, 1<<30)
	if err != nil {
		return err
	}
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	defer out.Flush()
	for _, m := range p.Matches {
		fmt.Fprintf(out, "%s:%d:%s\n", m.Path, m.Line, m.Text)
	}
	return nil
}
