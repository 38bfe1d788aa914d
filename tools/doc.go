// Package tools is the registry of staage: declarations, host-minted names,
// descriptor digests, the sealed result vocabulary, argument validation,
// previews and profiles.
//
// The package is pure. Nothing here reads a clock, a random number or the
// environment: a Toolset is a function of its declarations alone, so the same
// declarations in any order give the same names, the same sorted list and the
// same digests.
package tools
