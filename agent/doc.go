// Package agent runs conversations: threads in lanes, the turn loop that
// streams a provider's response, binds and gates each tool call and feeds the
// results back, and the one typed event stream every consumer reads.
package agent
