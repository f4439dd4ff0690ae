// This file lists the checklist items the suite reports on: the 76 items
// of acp-v1.md's Conformance checklist, the 25 subagent checks of
// acp-subagents.md §15, and the suite's own extra checks of what clients
// rely on beyond both lists (and of what became stable after schema
// 1.21), each with a short title for the table.

package conformance

import "strconv"

// Item is one checklist item.
type Item struct {
	// ID is "acp-v1#N", "subagents#N" or "extra#N".
	ID    string
	Level string
	Title string
}

// Checklist returns every item in document order.
func Checklist() []Item {
	out := make([]Item, 0, len(acpItems)+len(subagentItems)+len(extraItems))
	for i, it := range acpItems {
		out = append(out, Item{ID: "acp-v1#" + strconv.Itoa(i+1), Level: it[0], Title: it[1]})
	}
	for i, it := range subagentItems {
		out = append(out, Item{ID: "subagents#" + strconv.Itoa(i+1), Level: it[0], Title: it[1]})
	}
	for i, it := range extraItems {
		out = append(out, Item{ID: "extra#" + strconv.Itoa(i+1), Level: it[0], Title: it[1]})
	}
	return out
}

var acpItems = [...][2]string{
	{"MUST", "stdout carries only complete JSON-RPC lines, even with debug logs"},
	{"MUST", "valid UTF-8; non-ASCII round-trips through chunks"},
	{"MAY/policy", "diagnostics only on stderr"},
	{"MUST", `every message has "jsonrpc":"2.0"`},
	{"MUST", "exactly one response per request, id of the same type and value"},
	{"MUST", "a response has exactly one of result/error; well-formed errors"},
	{"MUST", "notifications never get a response"},
	{"SHOULD", "non-JSON line: -32700 id null, connection survives"},
	{"MUST", "unknown request method: -32601 with the same id"},
	{"SHOULD", "unknown notification ignored"},
	{"MUST", "stdin is read during a turn (cancel, answers to the agent's calls)"},
	{"policy", "request before initialize: -32600"},
	{"MUST", "initialize v1 returns 1"},
	{"MUST", "initialize 2, 0, 999 returns 1, not an error"},
	{"SHOULD", "missing or string protocolVersion: -32602"},
	{"MUST", "initialize result validates"},
	{"MUST", "every advertised capability works"},
	{"MUST", "baseline works without capabilities (text, resource_link)"},
	{"MUST", "empty client capabilities: no fs/terminal/elicitation calls"},
	{"MUST", "readTextFile only: never fs/write_text_file"},
	{"MUST", "terminal auth method only with auth.terminal"},
	{"SHOULD", "agentInfo with name and version"},
	{"MUST", "auth required before authenticate (-32000)"},
	{"MUST", "logout returns {} and re-gates session/new"},
	{"MUST", "session/new returns distinct non-empty ids"},
	{"SHOULD/policy", "relative cwd or missing mcpServers: -32602"},
	{"MUST", "session work happens in the session cwd"},
	{"MUST", "stdio MCP server entries accepted"},
	{"MUST", "session/load replays history before its response"},
	{"MUST", "prompting continues after session/load"},
	{"MUST", "session/resume: no replay, no mcpServers needed, prompts work"},
	{"MUST", "session/close mid-turn: prompt cancelled first, then {}"},
	{"MUST", "session/list shape and cwd filter"},
	{"MUST", "pagination visits each session once; invalid cursor errors"},
	{"MUST", "session/delete removes from list; unknown id returns {}"},
	{"MUST", "additionalDirectories validated; not reactivated on load"},
	{"MUST", "session_info_update shape"},
	{"MUST", "stopReason is a StopReason"},
	{"MUST", "every turn update before the prompt response"},
	{"MUST", "every update validates (stable tags, required fields)"},
	{"MUST", "cancel mid-turn answers cancelled, never an error"},
	{"MUST", "no update after the cancelled response"},
	{"MUST", "cancel with a pending permission: tool not run, cancelled"},
	{"MUST", "cancel for an idle or unknown session: no response, usable"},
	{"MUST", "next prompt after a cancelled turn completes"},
	{"policy", "concurrent prompt -32602; unknown session -32002"},
	{"policy", "unadvertised prompt content: -32602"},
	{"MUST", "advertised slash command is recognised"},
	{"MUST", "chunks carry one valid content block"},
	{"SHOULD", "messageId consistent within and across messages"},
	{"MUST", "tool_call id unique, title, kind and status valid"},
	{"SHOULD", "tool_call_update refers to an announced tool call"},
	{"MUST", "diff content: absolute path, newText; oldText only for existing files"},
	{"MUST", "tool locations absolute, lines ≥ 1"},
	{"MUST", "request_permission params well-formed"},
	{"MUST", "rejected permission: tool does not run"},
	{"MUST", "plan updates complete and well-formed"},
	{"MUST", "available_commands_update well-formed"},
	{"MUST", "usage_update well-formed"},
	{"MUST", "current_mode_update uses an advertised currentModeId"},
	{"MUST", "set_mode returns {} (also mid-turn); unknown mode -32602"},
	{"MUST", "set_config_option returns the complete list"},
	{"MUST", "no boolean options without the client capability"},
	{"MUST", "config_option_update carries the complete list"},
	{"SHOULD", "modes and the mode config option stay in sync"},
	{"MUST", "fs requests use absolute paths, lines ≥ 1"},
	{"MUST", "{} and null accepted for write/kill/release results"},
	{"MUST", "every terminal released before the turn ends"},
	{"MUST", "terminal embedded before its release"},
	{"MUST", "terminal/create cwd absolute"},
	{"MUST", "elicitation only with an advertised mode"},
	{"MUST", "$/cancel_request: exactly one response"},
	{"MUST", "$/cancel_request for unknown id ignored"},
	{"MUST", "-32800 answers to the agent's calls tolerated"},
	{"MUST", "unknown _meta and extra keys ignored"},
	{"MUST", "no non-spec keys at the root of spec objects"},
}

var subagentItems = [...][2]string{
	{"MUST", "no opt-in: no subagent updates or session items"},
	{"MUST", "no opt-in: no unknown session ids"},
	{"policy", "no opt-in: delegation is a plain tool call with the answer"},
	{"MUST", "opt-in: announcement before any child traffic"},
	{"MUST", "announcement on the immediate parent"},
	{"MUST", "one child id never under two parents"},
	{"MUST", "child ids unique and distinct from client sessions"},
	{"MUST", "subagent_update validates (unstable schema); absolute paths"},
	{"MUST", "child traffic only under the child id"},
	{"MUST", "child permission request on the child's id and tool call"},
	{"MUST", "running then idle per work unit"},
	{"MUST", "idle stop reasons: end_turn, cancelled, error"},
	{"MUST", "session_message(_chunk) shapes"},
	{"MUST", "session item names a known session"},
	{"policy", "session item comes with a text item"},
	{"MUST", "per-child cancel; parent and siblings go on"},
	{"MUST", "cancel for a child without cancel: no response"},
	{"MUST", "parent cancel: descendants idle/cancelled first"},
	{"MUST", "child permission cancelled: tool never runs"},
	{"MUST", "forbidden methods on a child id: -32602"},
	{"SHOULD", "session/list never lists children"},
	{"MUST", "parent close: no child traffic afterwards"},
	{"MUST", "load replays announcements before child traffic"},
	{"MUST", "load without opt-in: parent traffic only"},
	{"MUST", "relay of an acp child's grandchild"},
}

// extraItems are checks neither checklist numbers. Clients end a stdio
// connection by closing the agent's stdin (acp-v1 §1, step 7); an agent
// that stays alive is a process every client has to kill.
//
// The rest are what schema 1.22–1.25 made stable and the unstable
// features dshd implements on purpose (acp-v1 §23.1, §25).
var extraItems = [...][2]string{
	{"SHOULD", "the agent exits after the client closes its stdin"},
	{"SHOULD", "every tool_call and tool_call_update names its tool (schema 1.22)"},
	{"MUST", "notice only to a client with session.notices, never in a replay"},
	{"MUST", "compaction updates only with session.compaction; a load replays the compaction"},
	{"MUST", "the thinking option: boolean only with session.configOptions.boolean, select otherwise; it changes the requests"},
	{"MUST", "session/fork (unstable): advertised as an object, a new session with the source's history and its own journal"},
	{"MUST", "prompt usage (unstable) validates against schema.unstable.json"},
	{"MUST", "what the pinned schema accepts is accepted (nulls, malformed optional members); additionalDirectories null refused"},
}
