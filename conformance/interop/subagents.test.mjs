// The SDK's /unstable client opts in to subagent sessions
// (clientCapabilities.subagents: {}) while dshd's scripted model calls
// subagent and subagent_fork. Every subagent_update, session_message and
// session_message_chunk must parse with the SDK's own unstable zod schema
// (zSessionNotification), and the SDK must deliver every update dshd sent.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { rawUpdates, requireDshd, startDshd, tally, tempTree } from "./harness.mjs";

// The zod schemas are not exported by the package; load the module the
// /unstable entrypoint itself validates with, by its file path.
const zod = await import(new URL("./node_modules/@agentclientprotocol/sdk/dist/v1/unstable/schema/zod.gen.js", import.meta.url));

const subagentKinds = new Set(["subagent_update", "session_message", "session_message_chunk"]);

test("subagent messages from dshd parse with the SDK's unstable schema and all reach the client", { timeout: 60_000 }, async (t) => {
  requireDshd();
  const tree = tempTree(t);
  const received = [];
  const app = acp.client({ name: "dshd-interop-subagents" }).onNotification(acp.methods.client.session.update, ({ params }) => {
    received.push(params);
  });
  const dshd = startDshd(t, tree, ["--mode", "yolo"]);
  let parent;
  await app.connectWith(acp.ndJsonStream(dshd.stream.output, dshd.stream.input), async (ctx) => {
    const init = await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { subagents: {} },
      clientInfo: { name: "dshd-interop", version: "1.0.0" },
    });
    assert.equal(init.protocolVersion, 1);
    const session = await ctx.buildSession(tree.cwd).start();
    parent = session.sessionId;
    for (const prompt of ["conf-both", "conf-spawn", "conf-spawn-fail"]) {
      const done = session.prompt(prompt);
      let stop;
      while (!stop) {
        const m = await session.nextUpdate();
        if (m.kind === "stop") {
          stop = m.stopReason;
        }
      }
      assert.equal(stop, "end_turn");
      await done;
    }
    session.dispose();
  });
  assert.equal((await dshd.stop()).code, 0, dshd.stderr());

  const sent = rawUpdates(dshd.lines);
  const subagentMessages = sent.filter((p) => subagentKinds.has(p.update.sessionUpdate));
  const kinds = new Set(subagentMessages.map((p) => p.update.sessionUpdate));
  assert.ok(kinds.has("subagent_update") && kinds.has("session_message"), `dshd sent no subagent traffic: ${[...kinds]}`);
  for (const p of subagentMessages) {
    const r = zod.zSessionNotification.safeParse(p);
    assert.ok(r.success, `does not parse with zSessionNotification: ${JSON.stringify(p)}\n${r.error}`);
    assert.equal(r.data.update.sessionUpdate, p.update.sessionUpdate);
  }
  const children = new Set(sent.filter((p) => p.update.sessionUpdate === "subagent_update").map((p) => p.update.sessionId));
  assert.ok(children.size >= 4, `want four children over three turns, got ${children.size}`);
  assert.ok(sent.some((p) => p.sessionId !== parent && children.has(p.sessionId)), "no update on a child's own stream");
  assert.deepEqual(tally(received), tally(sent), "the SDK dropped updates dshd sent");
});
