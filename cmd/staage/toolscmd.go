package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"staage/tools"
	"staage/ui/sanitize"
)

// runTools prints the composed catalog and the boot report for the options
// given, without starting a session.
func runTools(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var opts bootOptions
	fs := flag.NewFlagSet("staage tools", flag.ContinueOnError)
	fs.SetOutput(stderr)
	opts.register(fs)
	fs.BoolVar(&opts.JSON, "json", false, "print the catalog and the report as one JSON document")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return &exitError{code: 2}
	}
	// The catalog does not depend on the model: no provider is loaded.
	rt, err := composeTools(ctx, opts, opts.Workspace)
	if err != nil {
		return err
	}
	defer rt.close()
	if opts.JSON {
		type toolJSON struct {
			Name        string               `json:"name"`
			Origin      string               `json:"origin"`
			RawName     string               `json:"rawName"`
			Policy      tools.ApprovalPolicy `json:"policy"`
			Effect      tools.EffectClass    `json:"effect"`
			Digest      string               `json:"digest"`
			Description string               `json:"description"`
			Schema      json.RawMessage      `json:"schema"`
		}
		doc := struct {
			Tools   []toolJSON   `json:"tools"`
			Report  []tools.Note `json:"report"`
			Boot    []string     `json:"boot"`
			Sandbox string       `json:"sandbox"`
		}{Sandbox: rt.sandbox.Describe(), Report: rt.report.Notes, Boot: rt.lines}
		for _, d := range rt.toolset.Descriptors() {
			doc.Tools = append(doc.Tools, toolJSON{d.Name, d.Origin, d.RawName, d.Policy, d.Effect, d.Digest.String(), d.Description, d.Schema})
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	}
	tw := tabwriter.NewWriter(stdout, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tORIGIN\tPOLICY\tEFFECT\tDIGEST")
	for _, d := range rt.toolset.Descriptors() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", sanitize.Line(d.Name), sanitize.Line(d.Origin), d.Policy, d.Effect, d.Digest.Short())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	fmt.Fprintln(stdout, "boot report:")
	for _, line := range rt.lines {
		fmt.Fprintln(stdout, "  "+sanitize.Line(line))
	}
	return nil
}
