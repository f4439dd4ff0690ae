// This file implements the checks that hold for every line of every case:
// the envelope, response ids, capability gates on the agent's requests,
// the shape of every session update, session ids the client never saw,
// tool-call and terminal bookkeeping, and turn ordering.

package conformance

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Violation is a rule broken anywhere in a case, found by the checks
// every line goes through.
type Violation struct {
	// Item is the checklist item the rule belongs to ("acp-v1#39").
	Item string
	Text string
	// Seq is the line that broke it.
	Seq int
	// Advice marks a finding that breaks no rule of the protocol (a key
	// only the draft schema defines): it is reported, never a failure.
	Advice bool

	process  int    // the agent process of the case that wrote the line
	method   string // of the line (for a response, of its request)
	exchange string // the line and the request it answers, rendered
}

// String renders the violation for failure details.
func (v Violation) String() string {
	return fmt.Sprintf("%s: %s (line %d)", v.Item, v.Text, v.Seq)
}

// clientCaps are the capabilities the client advertised, read from the
// initialize it sent.
type clientCaps struct {
	fsRead, fsWrite, terminal bool
	elicitForm, elicitURL     bool
	subagents                 bool
	boolOptions               bool
	authTerminal              bool
	notices, compaction       bool
}

func parseClientCaps(params json.RawMessage) clientCaps {
	cc := get(params, "clientCapabilities")
	isTrue := func(path ...string) bool { return string(get(cc, path...)) == "true" }
	isObj := func(path ...string) bool { return isObject(get(cc, path...)) }
	return clientCaps{
		fsRead:       isTrue("fs", "readTextFile"),
		fsWrite:      isTrue("fs", "writeTextFile"),
		terminal:     isTrue("terminal"),
		elicitForm:   isObj("elicitation", "form"),
		elicitURL:    isObj("elicitation", "url"),
		subagents:    isObj("subagents"),
		boolOptions:  isObj("session", "configOptions", "boolean"),
		authTerminal: isTrue("auth", "terminal"),
		notices:      isObj("session", "notices"),
		compaction:   isObj("session", "compaction"),
	}
}

type terminalState struct {
	session  string
	released bool
	embedded bool
}

type monitor struct {
	caps clientCaps

	known          map[string]bool   // sessions the client may see traffic for
	clientSessions map[string]bool   // sessions the client created, loaded or resumed
	parent         map[string]string // announced child → the outer id it was announced on
	toolCalls      map[string]map[string]bool
	modes          map[string][]string
	configIDs      map[string][]string

	promptSession map[string]string // open prompt request id → session
	setSession    map[string]string // open set_config_option request id → session
	turnOpen      map[string]bool
	cancelled     map[string]bool
	afterPrompt   map[string]string // session → stop reason, until the client next names it

	agentRequests map[string]*Msg // the agent's requests by id, until answered
	terminals     map[string]*terminalState
	seenIDs       map[string]bool

	// nullAllowed counts the client's lines an id-null error may answer
	// (not JSON, not a valid message, not UTF-8, or too long to read);
	// nullSeen counts the id-null errors. More of them than allowed means
	// the agent answered something that has no answer: a notification.
	nullAllowed, nullSeen int

	out []Violation
}

func newMonitor() *monitor {
	return &monitor{
		known:          map[string]bool{},
		clientSessions: map[string]bool{},
		parent:         map[string]string{},
		toolCalls:      map[string]map[string]bool{},
		modes:          map[string][]string{},
		configIDs:      map[string][]string{},
		promptSession:  map[string]string{},
		setSession:     map[string]string{},
		turnOpen:       map[string]bool{},
		cancelled:      map[string]bool{},
		afterPrompt:    map[string]string{},
		agentRequests:  map[string]*Msg{},
		terminals:      map[string]*terminalState{},
		seenIDs:        map[string]bool{},
	}
}

func (mo *monitor) flag(seq int, item, format string, args ...any) {
	mo.out = append(mo.out, Violation{Item: item, Text: fmt.Sprintf(format, args...), Seq: seq})
}

// advise records a finding that breaks no MUST (a SHOULD the agent does
// not follow): reported, never a failure.
func (mo *monitor) advise(seq int, item, format string, args ...any) {
	mo.out = append(mo.out, Violation{Item: item, Text: fmt.Sprintf(format, args...), Seq: seq, Advice: true})
}

// sendUnparsed observes a client line that an error with id null may
// answer.
func (mo *monitor) sendUnparsed() { mo.nullAllowed++ }

// send observes a message the client wrote.
func (mo *monitor) send(m *Msg) {
	sid := m.SessionID()
	if m.IsRequest() && sid != "" {
		delete(mo.afterPrompt, sid)
	}
	switch {
	case m.IsRequest():
		switch m.Method {
		case "initialize":
			mo.caps = parseClientCaps(m.Params)
		case "session/load", "session/resume":
			if sid != "" {
				mo.known[sid] = true
				mo.clientSessions[sid] = true
				mo.toolCalls[sid] = nil
			}
		case "session/set_config_option":
			mo.setSession[m.IDKey()] = sid
		case "session/prompt":
			mo.promptSession[m.IDKey()] = sid
			mo.turnOpen[sid] = true
			mo.cancelled[sid] = false
		}
	case m.IsNotification():
		switch m.Method {
		case "session/cancel":
			if mo.turnOpen[sid] {
				mo.cancelled[sid] = true
			}
		case "$/cancel_request":
			if s, ok := mo.promptSession[idKey(get(m.Params, "requestId"))]; ok {
				mo.cancelled[s] = true
			}
		}
	case m.IsResponse():
		req := mo.agentRequests[m.IDKey()]
		delete(mo.agentRequests, m.IDKey())
		if req != nil && req.Method == "terminal/create" && m.Result != nil {
			if tid := getString(m.Result, "terminalId"); tid != "" {
				mo.terminals[tid] = &terminalState{session: req.SessionID()}
			}
		}
	}
}

// recv observes a line the agent wrote; c.mu is held.
func (mo *monitor) recv(l *Line) {
	if l.Err != nil && l.Msg != nil && l.Msg.Method == "" && l.Msg.ID == nil && (has(l.Raw, "error") || has(l.Raw, "result")) {
		// An answer without an id: to a line the agent could not read
		// (which needs "id": null), or to a notification.
		if mo.nullSeen < mo.nullAllowed {
			mo.nullSeen++
			mo.flag(l.Seq, "acp-v1#8", "an error without an id: the answer to a line that is not a valid request must carry \"id\": null")
			return
		}
		mo.flag(l.Seq, "acp-v1#7", "a response without an id, after every line it could answer had its answer: notifications get no response, not even an error")
		return
	}
	if l.Err != nil {
		item := "acp-v1#1"
		switch msg := l.Err.Error(); {
		case strings.Contains(msg, "UTF-8"):
			item = "acp-v1#2"
		case strings.Contains(msg, "jsonrpc"):
			item = "acp-v1#4"
		case strings.Contains(msg, "result") || strings.Contains(msg, "error"):
			item = "acp-v1#6"
		}
		mo.flag(l.Seq, item, "invalid stdout line: %v: %s", l.Err, clip(l.Raw, 200))
		return
	}
	m := l.Msg
	switch {
	case m.IsResponse():
		mo.response(l)
	case m.IsRequest():
		mo.agentRequests[m.IDKey()] = m
		mo.request(l)
	default:
		mo.notification(l)
	}
}

func (mo *monitor) response(l *Line) {
	m := l.Msg
	key := m.IDKey()
	if key == "null" {
		if m.Error == nil {
			mo.flag(l.Seq, "acp-v1#5", "a success result with id null")
			return
		}
		mo.nullSeen++
		if mo.nullSeen > mo.nullAllowed {
			mo.flag(l.Seq, "acp-v1#7", "an error with id null that answers none of the client's lines (every line it could answer had its answer): notifications get no response, not even an error")
		}
		return
	}
	if mo.seenIDs[key] {
		mo.flag(l.Seq, "acp-v1#5", "a second response for id %s", key)
		return
	}
	mo.seenIDs[key] = true
	if l.ReplyTo == "" {
		mo.flag(l.Seq, "acp-v1#5", "a response for id %s, which the client never used", key)
		return
	}
	res := m.Result
	switch l.ReplyTo {
	case "initialize":
		if m.Error == nil {
			mo.checkInitResult(l.Seq, res)
		}
	case "session/new", "session/fork":
		if m.Error == nil {
			sid := getString(res, "sessionId")
			if sid == "" {
				mo.flag(l.Seq, "acp-v1#25", "%s result without a sessionId", l.ReplyTo)
				return
			}
			mo.known[sid] = true
			mo.clientSessions[sid] = true
			mo.sessionState(l.Seq, sid, res)
		}
	case "session/load", "session/resume":
		if m.Error == nil {
			// The session id is in the request; the state applies to it.
			mo.sessionState(l.Seq, "", res)
		}
	case "session/set_config_option":
		sid := mo.setSession[key]
		delete(mo.setSession, key)
		if m.Error == nil {
			opts := getArray(res, "configOptions")
			mo.checkConfigOptions(l.Seq, opts)
			if sid != "" && opts != nil {
				mo.configIDs[sid] = nil
				for _, o := range opts {
					mo.configIDs[sid] = append(mo.configIDs[sid], getString(o, "id"))
				}
			}
		}
	case "session/prompt":
		sid := mo.promptSession[key]
		delete(mo.promptSession, key)
		mo.turnOpen[sid] = false
		if m.Error != nil {
			if mo.cancelled[sid] {
				mo.flag(l.Seq, "acp-v1#41", "a cancelled prompt was answered with an error (%v) instead of stopReason cancelled", m.Error)
			}
			return
		}
		stop := getString(res, "stopReason")
		if !slices.Contains([]string{"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"}, stop) {
			mo.flag(l.Seq, "acp-v1#38", "stopReason %q is not a StopReason", stop)
		}
		mo.afterPrompt[sid] = stop
		for tid, ts := range mo.terminals {
			if ts.session == sid && !ts.released {
				mo.flag(l.Seq, "acp-v1#68", "terminal %s was not released before the turn ended", tid)
				ts.released = true
			}
		}
	}
}

func (mo *monitor) checkInitResult(seq int, res json.RawMessage) {
	if v := get(res, "protocolVersion"); v == nil || !reUint().Match(v) {
		mo.flag(seq, "acp-v1#16", "protocolVersion %s is not an integer", v)
	}
	for _, am := range getArray(res, "authMethods") {
		if t := get(am, "type"); t != nil {
			if getString(am, "type") != "terminal" {
				mo.flag(seq, "acp-v1#16", "auth method with type %s (agent-handled methods have no type)", t)
			} else if !mo.caps.authTerminal {
				mo.flag(seq, "acp-v1#21", "a terminal auth method is listed though the client did not send auth.terminal")
			}
		}
	}
	caps := get(res, "agentCapabilities")
	for name, v := range getObject(caps, "sessionCapabilities") {
		if name != "_meta" && !isObject(v) && !isNull(v) {
			mo.flag(seq, "acp-v1#16", "sessionCapabilities.%s is %s, not an object", name, v)
		}
	}
	if v := get(caps, "auth", "logout"); v != nil && !isObject(v) && !isNull(v) {
		mo.flag(seq, "acp-v1#16", "auth.logout is %s, not an object", v)
	}
}

// sessionState records modes and config options of a setup result.
func (mo *monitor) sessionState(seq int, sid string, res json.RawMessage) {
	opts := getArray(res, "configOptions")
	mo.checkConfigOptions(seq, opts)
	if sid == "" {
		return
	}
	for _, m := range getArray(res, "modes", "availableModes") {
		mo.modes[sid] = append(mo.modes[sid], getString(m, "id"))
	}
	for _, o := range opts {
		mo.configIDs[sid] = append(mo.configIDs[sid], getString(o, "id"))
	}
}

func (mo *monitor) checkConfigOptions(seq int, opts []json.RawMessage) {
	for _, o := range opts {
		id := getString(o, "id")
		switch getString(o, "type") {
		case "boolean":
			if !mo.caps.boolOptions {
				mo.flag(seq, "acp-v1#63", "boolean config option %q sent to a client without session.configOptions.boolean", id)
			}
		case "select":
			cur := getString(o, "currentValue")
			if cur == "" {
				mo.flag(seq, "acp-v1#62", "config option %q has no currentValue", id)
				continue
			}
			if !slices.Contains(selectValues(get(o, "options")), cur) {
				mo.flag(seq, "acp-v1#62", "config option %q: currentValue %q is not one of its values", id, cur)
			}
		}
	}
}

// selectValues flattens flat or grouped select options.
func selectValues(raw json.RawMessage) []string {
	var out []string
	for _, it := range getArray(raw) {
		if g := get(it, "options"); g != nil {
			out = append(out, selectValues(g)...)
			continue
		}
		out = append(out, getString(it, "value"))
	}
	return out
}

func (mo *monitor) unknownSession(seq int, what, sid string) {
	item := "subagents#2"
	if mo.caps.subagents {
		item = "subagents#4"
	}
	mo.flag(seq, item, "%s carries session id %q, which the client has not created, loaded, resumed or seen announced", what, sid)
}

func (mo *monitor) request(l *Line) {
	m := l.Msg
	sid := m.SessionID()
	p := m.Params
	if sid != "" && !mo.known[sid] {
		mo.unknownSession(l.Seq, m.Method, sid)
	}
	gate := func(ok bool, item, what string) {
		if !ok {
			mo.flag(l.Seq, item, "the agent called %s though the client did not advertise %s", m.Method, what)
		}
	}
	absolute := func(field string) {
		if v := getString(p, field); v != "" && !filepath.IsAbs(v) {
			mo.flag(l.Seq, "acp-v1#66", "%s %s %q is not absolute", m.Method, field, v)
		}
	}
	switch m.Method {
	case "fs/read_text_file":
		gate(mo.caps.fsRead, "acp-v1#19", "fs.readTextFile")
		absolute("path")
		if v := get(p, "line"); v != nil && !isNull(v) && string(v) == "0" {
			mo.flag(l.Seq, "acp-v1#66", "fs/read_text_file line 0 (lines are 1-based)")
		}
	case "fs/write_text_file":
		gate(mo.caps.fsWrite, "acp-v1#20", "fs.writeTextFile")
		absolute("path")
	case "terminal/create":
		gate(mo.caps.terminal, "acp-v1#19", "terminal")
		if v := getString(p, "cwd"); v != "" && !filepath.IsAbs(v) {
			mo.flag(l.Seq, "acp-v1#70", "terminal/create cwd %q is not absolute", v)
		}
	case "terminal/output", "terminal/wait_for_exit", "terminal/kill", "terminal/release":
		gate(mo.caps.terminal, "acp-v1#19", "terminal")
		tid := getString(p, "terminalId")
		ts := mo.terminals[tid]
		switch {
		case ts == nil:
			mo.flag(l.Seq, "acp-v1#68", "%s for terminal %q, which was never created", m.Method, tid)
		case ts.released:
			mo.flag(l.Seq, "acp-v1#68", "%s for terminal %q after its release", m.Method, tid)
		case m.Method == "terminal/release":
			ts.released = true
		}
	case "elicitation/create":
		mode := getString(p, "mode")
		gate((mode == "form" && mo.caps.elicitForm) || (mode == "url" && mo.caps.elicitURL), "acp-v1#71", "elicitation."+mode)
		if getString(p, "message") == "" {
			mo.flag(l.Seq, "acp-v1#71", "elicitation/create without a message")
		}
		if has(p, "sessionId") == has(p, "requestId") {
			mo.flag(l.Seq, "acp-v1#71", "elicitation/create must carry exactly one scope (sessionId or requestId)")
		}
	case "session/request_permission":
		tc := get(p, "toolCall")
		if sid == "" || getString(tc, "toolCallId") == "" {
			mo.flag(l.Seq, "acp-v1#55", "session/request_permission without sessionId or toolCall.toolCallId")
		}
		opts := getArray(p, "options")
		if len(opts) == 0 {
			mo.flag(l.Seq, "acp-v1#55", "session/request_permission with no options")
		}
		for _, o := range opts {
			if !slices.Contains([]string{"allow_once", "allow_always", "reject_once", "reject_always"}, getString(o, "kind")) || getString(o, "optionId") == "" || getString(o, "name") == "" {
				mo.flag(l.Seq, "acp-v1#55", "permission option %s is malformed", clip(o, 120))
			}
		}
		if mo.parent[sid] != "" && !mo.toolCalls[sid][getString(tc, "toolCallId")] {
			mo.flag(l.Seq, "subagents#10", "a child's permission request names tool call %q, not announced on the child's stream", getString(tc, "toolCallId"))
		}
		mo.checkToolContent(l.Seq, sid, get(tc, "content"), get(tc, "locations"))
	}
}

var (
	stableUpdates   = []string{"user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan", "available_commands_update", "current_mode_update", "config_option_update", "session_info_update", "usage_update"}
	subagentUpdates = []string{"subagent_update", "session_message", "session_message_chunk"}
	turnContent     = []string{"agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan"}
	toolKinds       = []string{"read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"}
	toolStatuses    = []string{"pending", "in_progress", "completed", "failed"}

	reUint     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\d+$`) })
	rePositive = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[1-9]\d*$`) })
)

func (mo *monitor) notification(l *Line) {
	m := l.Msg
	switch m.Method {
	case "elicitation/complete":
		if !mo.caps.elicitURL {
			mo.flag(l.Seq, "acp-v1#71", "elicitation/complete though the client did not advertise elicitation.url")
		}
	case "session/update":
		mo.update(l)
	}
}

func (mo *monitor) update(l *Line) {
	m := l.Msg
	sid := m.SessionID()
	u := m.Update()
	kind := m.UpdateKind()
	if sid == "" || u == nil {
		mo.flag(l.Seq, "acp-v1#40", "session/update without sessionId or update")
		return
	}
	if !mo.known[sid] {
		mo.unknownSession(l.Seq, "a session/update ("+kind+")", sid)
	}
	switch {
	case slices.Contains(stableUpdates, kind):
	case kind == "notice":
		if !mo.caps.notices {
			mo.flag(l.Seq, "extra#3", "a notice sent to a client that did not advertise session.notices")
			return
		}
	case kind == "compaction_update" || kind == "compaction_summary_chunk":
		if !mo.caps.compaction {
			mo.flag(l.Seq, "extra#4", "%s sent to a client that did not advertise session.compaction", kind)
			return
		}
	case slices.Contains(subagentUpdates, kind):
		if !mo.caps.subagents {
			mo.flag(l.Seq, "subagents#1", "%s sent to a client that did not opt in to subagents", kind)
			return
		}
	default:
		mo.flag(l.Seq, "acp-v1#40", "sessionUpdate %q is not a stable update", kind)
		return
	}
	if stop, ok := mo.afterPrompt[sid]; ok && slices.Contains(turnContent, kind) && mo.clientSessions[sid] {
		item := "acp-v1#39"
		if stop == "cancelled" {
			item = "acp-v1#42"
		}
		mo.flag(l.Seq, item, "%s for session %s after its prompt was answered (%s)", kind, sid, stop)
	}
	switch kind {
	case "user_message_chunk", "agent_message_chunk", "agent_thought_chunk":
		mo.checkBlock(l.Seq, "acp-v1#49", get(u, "content"))
		if v := get(u, "messageId"); v != nil && !isNull(v) && getString(u, "messageId") == "" {
			mo.flag(l.Seq, "acp-v1#50", "messageId %s is not a non-empty string", v)
		}
	case "tool_call":
		id := getString(u, "toolCallId")
		if id == "" || get(u, "title") == nil || getString(u, "title") == "" && string(get(u, "title")) != `""` {
			mo.flag(l.Seq, "acp-v1#51", "tool_call without toolCallId or title")
		}
		if mo.toolCalls[sid] == nil {
			mo.toolCalls[sid] = map[string]bool{}
		}
		if mo.toolCalls[sid][id] {
			mo.flag(l.Seq, "acp-v1#51", "tool_call %q announced twice in session %s", id, sid)
		}
		mo.toolCalls[sid][id] = true
		mo.checkToolFields(l.Seq, sid, u)
		if getString(u, "name") == "" {
			mo.advise(l.Seq, "extra#2", "tool_call %q has no name (the tool's name is stable since schema 1.22)", id)
		}
	case "tool_call_update":
		id := getString(u, "toolCallId")
		if !mo.toolCalls[sid][id] {
			mo.flag(l.Seq, "acp-v1#52", "tool_call_update for %q, never announced with tool_call in session %s", id, sid)
		}
		mo.checkToolFields(l.Seq, sid, u)
	case "notice":
		if getString(u, "title") == "" || getString(u, "severity") == "" {
			mo.flag(l.Seq, "extra#3", "notice without a severity or a non-empty title")
		}
	case "compaction_update":
		if getString(u, "compactionId") == "" || getString(u, "status") == "" {
			mo.flag(l.Seq, "extra#4", "compaction_update without compactionId or status")
		}
	case "plan":
		entries := get(u, "entries")
		if entries == nil || !strings.HasPrefix(string(entries), "[") {
			mo.flag(l.Seq, "acp-v1#57", "plan without an entries array")
		}
		for _, e := range getArray(u, "entries") {
			if get(e, "content") == nil || !slices.Contains([]string{"high", "medium", "low"}, getString(e, "priority")) || !slices.Contains([]string{"pending", "in_progress", "completed"}, getString(e, "status")) {
				mo.flag(l.Seq, "acp-v1#57", "plan entry %s is malformed", clip(e, 120))
			}
		}
	case "available_commands_update":
		for _, c := range getArray(u, "availableCommands") {
			if getString(c, "name") == "" || get(c, "description") == nil {
				mo.flag(l.Seq, "acp-v1#58", "command %s lacks name or description", clip(c, 120))
			}
			if in := get(c, "input"); in != nil && !isNull(in) && get(in, "hint") == nil {
				mo.flag(l.Seq, "acp-v1#58", "command input %s lacks hint", clip(in, 120))
			}
		}
	case "current_mode_update":
		cur := getString(u, "currentModeId")
		if cur == "" {
			mo.flag(l.Seq, "acp-v1#60", "current_mode_update without currentModeId")
		} else if modes := mo.modes[sid]; len(modes) > 0 && !slices.Contains(modes, cur) {
			mo.flag(l.Seq, "acp-v1#60", "currentModeId %q is not an advertised mode %v", cur, modes)
		}
	case "config_option_update":
		opts := getArray(u, "configOptions")
		mo.checkConfigOptions(l.Seq, opts)
		var ids []string
		for _, o := range opts {
			ids = append(ids, getString(o, "id"))
		}
		// Dependent options may come and go; an update that only lost
		// options is a partial list.
		if lost, added := listDiff(mo.configIDs[sid], ids); len(lost) > 0 && len(added) == 0 {
			mo.flag(l.Seq, "acp-v1#64", "config_option_update lacks options %v: it must carry the complete list", lost)
		}
		mo.configIDs[sid] = ids
	case "session_info_update":
		for _, k := range []string{"sessionId", "cwd", "additionalDirectories"} {
			if has(u, k) {
				mo.flag(l.Seq, "acp-v1#37", "session_info_update carries %s", k)
			}
		}
		if v := get(u, "updatedAt"); v != nil && !isNull(v) {
			if _, err := time.Parse(time.RFC3339Nano, getString(u, "updatedAt")); err != nil {
				mo.flag(l.Seq, "acp-v1#37", "updatedAt %s is not ISO 8601", v)
			}
		}
	case "usage_update":
		for _, k := range []string{"used", "size"} {
			if !reUint().Match(get(u, k)) {
				mo.flag(l.Seq, "acp-v1#59", "usage_update %s is %s, not a non-negative integer", k, get(u, k))
			}
		}
		if c := get(u, "cost"); c != nil && !isNull(c) {
			var amount float64
			if json.Unmarshal(get(c, "amount"), &amount) != nil || getString(c, "currency") == "" {
				mo.flag(l.Seq, "acp-v1#59", "usage_update cost %s is malformed", c)
			}
		}
	case "subagent_update":
		mo.subagentUpdate(l.Seq, sid, u)
	case "session_message":
		if getString(u, "messageId") == "" {
			mo.flag(l.Seq, "subagents#13", "session_message without messageId")
		}
		for _, k := range []string{"senderSessionId", "recipientSessionId"} {
			if s := getString(u, k); s != "" && !mo.known[s] {
				mo.flag(l.Seq, "subagents#13", "session_message %s %q is not known to the client", k, s)
			}
		}
	case "session_message_chunk":
		if getString(u, "messageId") == "" {
			mo.flag(l.Seq, "subagents#13", "session_message_chunk without messageId")
		}
		if !isObject(get(u, "content")) {
			mo.flag(l.Seq, "subagents#13", "session_message_chunk content is not exactly one content block")
		} else {
			mo.checkBlock(l.Seq, "subagents#13", get(u, "content"))
		}
		if has(u, "senderSessionId") || has(u, "recipientSessionId") {
			mo.flag(l.Seq, "subagents#13", "session_message_chunk carries participants")
		}
	}
}

func (mo *monitor) subagentUpdate(seq int, outer string, u json.RawMessage) {
	child := getString(u, "sessionId")
	if child == "" {
		mo.flag(seq, "subagents#8", "subagent_update without update.sessionId")
		return
	}
	if prev, ok := mo.parent[child]; ok {
		if prev != outer {
			mo.flag(seq, "subagents#6", "child %s announced under %s and again under %s", child, prev, outer)
		}
	} else {
		if mo.clientSessions[child] {
			mo.flag(seq, "subagents#7", "child id %s is one of the client's own sessions", child)
		}
		if child == outer {
			mo.flag(seq, "subagents#5", "child %s announced on its own stream", child)
		}
		mo.parent[child] = outer
		mo.known[child] = true
	}
	for _, k := range []string{"cwd"} {
		if v := getString(u, k); v != "" && !filepath.IsAbs(v) {
			mo.flag(seq, "subagents#8", "subagent_update %s %q is not absolute", k, v)
		}
	}
	for _, d := range getArray(u, "additionalDirectories") {
		var s string
		if json.Unmarshal(d, &s) != nil || !filepath.IsAbs(s) {
			mo.flag(seq, "subagents#8", "subagent_update additionalDirectories entry %s is not absolute", d)
		}
	}
}

// checkToolFields checks a tool_call or tool_call_update payload.
func (mo *monitor) checkToolFields(seq int, sid string, u json.RawMessage) {
	if k := get(u, "kind"); k != nil && !isNull(k) && !slices.Contains(toolKinds, getString(u, "kind")) {
		mo.flag(seq, "acp-v1#51", "tool kind %s is not a ToolKind", k)
	}
	if s := get(u, "status"); s != nil && !isNull(s) && !slices.Contains(toolStatuses, getString(u, "status")) {
		mo.flag(seq, "acp-v1#51", "tool status %s is not a ToolCallStatus", s)
	}
	mo.checkToolContent(seq, sid, get(u, "content"), get(u, "locations"))
}

func (mo *monitor) checkToolContent(seq int, sid string, content, locations json.RawMessage) {
	hasText, hasSession := false, false
	for _, it := range getArray(content) {
		switch getString(it, "type") {
		case "content":
			mo.checkBlock(seq, "acp-v1#49", get(it, "content"))
			if getString(it, "content", "type") == "text" {
				hasText = true
			}
		case "diff":
			if p := getString(it, "path"); !filepath.IsAbs(p) {
				mo.flag(seq, "acp-v1#53", "diff path %q is not absolute", p)
			}
			if get(it, "newText") == nil || isNull(get(it, "newText")) {
				mo.flag(seq, "acp-v1#53", "diff without newText")
			}
		case "terminal":
			// Showing a terminal again after its release is fine; its
			// first embedding must come before the release.
			tid := getString(it, "terminalId")
			if ts := mo.terminals[tid]; ts != nil {
				if ts.released && !ts.embedded {
					mo.flag(seq, "acp-v1#69", "terminal %s first embedded after its release", tid)
				}
				ts.embedded = true
			}
		case "session":
			hasSession = true
			ref := getString(it, "sessionId")
			if !mo.caps.subagents {
				mo.flag(seq, "subagents#1", "a session content item sent to a client that did not opt in")
			} else if !mo.known[ref] {
				mo.flag(seq, "subagents#14", "session content item names %q, unknown to the client", ref)
			}
		default:
			mo.flag(seq, "acp-v1#40", "tool call content type %q is not a ToolCallContent", getString(it, "type"))
		}
	}
	if hasSession && !hasText {
		mo.flag(seq, "subagents#15", "tool call content with a session item but no text item")
	}
	for _, loc := range getArray(locations) {
		if p := getString(loc, "path"); !filepath.IsAbs(p) {
			mo.flag(seq, "acp-v1#54", "location path %q is not absolute", p)
		}
		if ln := get(loc, "line"); ln != nil && !isNull(ln) && !rePositive().Match(ln) {
			mo.flag(seq, "acp-v1#54", "location line %s is not ≥ 1", ln)
		}
	}
	_ = sid
}

// checkBlock checks one ContentBlock.
func (mo *monitor) checkBlock(seq int, item string, b json.RawMessage) {
	if !isObject(b) {
		mo.flag(seq, item, "content %s is not one content block", clip(b, 80))
		return
	}
	need := map[string][]string{
		"text":          {"text"},
		"image":         {"data", "mimeType"},
		"audio":         {"data", "mimeType"},
		"resource_link": {"uri", "name"},
		"resource":      {"resource"},
	}
	t := getString(b, "type")
	fields, ok := need[t]
	if !ok {
		mo.flag(seq, item, "content block type %q is not a ContentBlock", t)
		return
	}
	for _, f := range fields {
		if get(b, f) == nil || isNull(get(b, f)) {
			mo.flag(seq, item, "%s content block without %s", t, f)
		}
	}
}

// finish returns what was found.
func (mo *monitor) finish() []Violation {
	return append([]Violation(nil), mo.out...)
}
