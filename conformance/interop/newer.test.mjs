// What became stable after schema 1.21, through the official SDK's stable
// client: tool-call names for everyone; notices, compaction updates and a
// boolean thinking option only for a client that advertised them. The SDK
// validates every update it delivers (and drops one it cannot parse), so
// the test also compares what it delivered with what dshd wrote, and
// parses the new kinds with the stable zod schema itself.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { rawUpdates, requireDshd, startDshd, tally, tempTree } from "./harness.mjs";

const zod = await import(new URL("./node_modules/@agentclientprotocol/sdk/dist/v1/schema/zod.gen.js", import.meta.url));

const missingMCP = [{ name: "missing-docs", command: "/nonexistent/docs-mcp", args: [], env: [] }];

const everything = {
  session: { notices: {}, compaction: {}, configOptions: { boolean: {} } },
};

/**
 * Runs one client against a fresh dshd with a tiny context window: a
 * session with an MCP server that cannot start, a tool call, two turns
 * (the second compacts the first). It returns what dshd sent and what the
 * SDK delivered, and the session/new result.
 */
async function run(t, clientCapabilities) {
  const tree = tempTree(t);
  const received = [];
  const app = acp.client({ name: "dshd-interop-newer" }).onNotification(acp.methods.client.session.update, ({ params }) => {
    received.push(params);
  });
  const dshd = startDshd(t, tree, ["--mode", "yolo", "--context-window", "40"]);
  let created;
  await app.connectWith(acp.ndJsonStream(dshd.stream.output, dshd.stream.input), async (ctx) => {
    await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities,
      clientInfo: { name: "dshd-interop", version: "1.0.0" },
    });
    created = await ctx.request(acp.methods.agent.session.new, { cwd: tree.cwd, mcpServers: missingMCP });
    for (const text of ["conf-write", "the second turn, which compacts the first"]) {
      const res = await ctx.request(acp.methods.agent.session.prompt, { sessionId: created.sessionId, prompt: [{ type: "text", text }] });
      assert.equal(res.stopReason, "end_turn");
    }
  });
  assert.equal((await dshd.stop()).code, 0, dshd.stderr());
  const sent = rawUpdates(dshd.lines);
  assert.deepEqual(tally(received), tally(sent), "the SDK dropped updates dshd sent");
  return { sent, received, created };
}

function ofKind(list, kind) {
  return list.filter((p) => p.update.sessionUpdate === kind);
}

function parses(p) {
  const r = zod.zSessionNotification.safeParse(p);
  assert.ok(r.success, `does not parse with the stable zSessionNotification: ${JSON.stringify(p)}\n${r.error}`);
}

test("a client that advertised notices, compaction and booleans gets them, every tool call named, all valid", { timeout: 60_000 }, async (t) => {
  requireDshd();
  const { sent, created } = await run(t, everything);

  const calls = [...ofKind(sent, "tool_call"), ...ofKind(sent, "tool_call_update")];
  assert.ok(calls.length >= 2, "no tool call");
  for (const p of calls) {
    assert.equal(p.update.name, "write_file", `a tool call update without the tool's name: ${JSON.stringify(p.update)}`);
    parses(p);
  }

  const notices = ofKind(sent, "notice");
  assert.equal(notices.length, 1, "want one notice for the MCP server that cannot start");
  assert.equal(notices[0].update.severity, "warning");
  assert.match(notices[0].update.title, /missing-docs/);
  parses(notices[0]);
  assert.ok(!ofKind(sent, "agent_message_chunk").some((p) => p.update.content.text.includes("⚠")), "the warning also came as a message");

  const compactions = ofKind(sent, "compaction_update");
  assert.deepEqual(compactions.map((p) => p.update.status), ["in_progress", "completed"]);
  assert.equal(compactions[0].update.compactionId, compactions[1].update.compactionId);
  assert.match(compactions[1].update.summary[0].text, /Summary/);
  compactions.forEach(parses);

  const thinking = created.configOptions.find((o) => o.id === "thinking");
  assert.equal(thinking?.type, "boolean");
  assert.equal(thinking.category, "thought_level");
  assert.equal(thinking.currentValue, true);
});

test("a client that advertised nothing gets no notice, no compaction and no boolean, and still every tool call named", { timeout: 60_000 }, async (t) => {
  requireDshd();
  const { sent, created } = await run(t, {});
  for (const kind of ["notice", "compaction_update", "compaction_summary_chunk"]) {
    assert.equal(ofKind(sent, kind).length, 0, `dshd sent ${kind} to a client that did not advertise it`);
  }
  for (const p of [...ofKind(sent, "tool_call"), ...ofKind(sent, "tool_call_update")]) {
    assert.equal(p.update.name, "write_file");
  }
  assert.ok(ofKind(sent, "agent_message_chunk").some((p) => p.update.content.text.startsWith("⚠") && p.update.content.text.includes("missing-docs")), "the warning did not come as a message");
  assert.ok(!created.configOptions.some((o) => o.type === "boolean"), "a boolean option for a client without session.configOptions.boolean");
  const thinking = created.configOptions.find((o) => o.id === "thinking");
  assert.equal(thinking?.type, "select");
  assert.deepEqual(thinking.options.map((o) => o.value), ["on", "off"]);
});
