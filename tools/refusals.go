package tools

// RefusalName is the name of a typed refusal. Every name staage can answer
// with is a constant in this file, so the vocabulary is sealed and greppable.
type RefusalName string

// The sealed refusal vocabulary.
const (
	// Files and paths.
	FileStale      RefusalName = "file.stale"       // the cited digest is not the file's
	FileMissing    RefusalName = "file.missing"     // no such file, or no match for old
	FileAmbiguous  RefusalName = "file.ambiguous"   // old matched more than once
	FileExists     RefusalName = "file.exists"      // write without overwrite
	FileBinary     RefusalName = "file.binary"      // a text operation on binary content
	FileTooLarge   RefusalName = "file.too_large"   // over the tool's byte budget
	FileNotRegular RefusalName = "file.not_regular" // FIFO, device, socket, directory
	PathEscape     RefusalName = "path.escape"      // resolves outside the root
	FindInvalid    RefusalName = "find.invalid"     // a bad glob, regexp or cursor

	// Processes.
	BashExit           RefusalName = "bash.exit"           // non-zero exit; carries code and output
	BashTimeout        RefusalName = "bash.timeout"        // killed at its deadline
	BashSandbox        RefusalName = "bash.sandbox"        // the sandbox could not be set up
	ScratchDenied      RefusalName = "scratch.denied"      // not one of the read-only commands, or a flag that writes
	ScratchUnavailable RefusalName = "scratch.unavailable" // no --scratch directory was given
	CheckUnknown       RefusalName = "check.unknown"       // no such gate script

	// Knowledge.
	SkillUnknown RefusalName = "skill.unknown"

	// The console's own state (plan, desk).
	PlanInvalid  RefusalName = "plan.invalid"   // empty title, control characters, two steps in progress, too many steps
	DeskTooLarge RefusalName = "desk.too_large" // a desk page over its byte cap

	// Delegation.
	TaskObjective  RefusalName = "task.objective"  // vague or empty objective
	TaskMode       RefusalName = "task.mode"       // mode not available in this boot
	ChangeConflict RefusalName = "change.conflict" // diff no longer applies
	ChangeUnknown  RefusalName = "change.unknown"

	// Approvals.
	ApprovalDenied          RefusalName = "approval.denied"
	ApprovalChildUnattended RefusalName = "approval.child_unattended"
	ApprovalCancelled       RefusalName = "approval.cancelled"

	// Registry and dispatch.
	ArgsInvalid       RefusalName = "args.invalid"
	ToolUnknown       RefusalName = "tool.unknown"
	ToolOffProfile    RefusalName = "tool.off_profile" // declared, but not in this turn's profile
	ToolFailed        RefusalName = "tool.failed"      // the tool broke; a bug, reported not hidden
	ToolCancelled     RefusalName = "tool.cancelled"   // the turn was interrupted while it ran
	ToolInterrupted   RefusalName = "tool.interrupted" // started before a crash; never re-run silently
	RailUnavailable   RefusalName = "rail.unavailable"
	RegistryCollision RefusalName = "registry.collision"

	// MCP servers (tools/mcp).
	MCPError       RefusalName = "mcp.error"       // the server answered the call with isError or a protocol error
	MCPUnavailable RefusalName = "mcp.unavailable" // the server is gone, timed out, or changed the tool since boot
)
