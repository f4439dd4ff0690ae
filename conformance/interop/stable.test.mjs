// The official TypeScript SDK's stable client drives bin/dshd: handshake, a
// prompt with streamed chunks, cancel, session/list and session/load in a
// second process. The SDK validates everything it receives; because it
// drops a session/update it cannot parse without a word, the test also
// compares what it delivered with what dshd wrote.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { agentText, rawUpdates, requireDshd, startDshd, tally, tempTree } from "./harness.mjs";

const clientInfo = { name: "dshd-interop", version: "1.0.0" };

/** A client app that records every session/update the SDK let through. */
function recordingClient(received) {
  return acp.client({ name: "dshd-interop" }).onNotification(acp.methods.client.session.update, ({ params }) => {
    received.push(params);
  });
}

/** Reads one turn's updates up to its stop message. */
async function readTurn(session) {
  const updates = [];
  for (;;) {
    const m = await session.nextUpdate();
    if (m.kind === "stop") {
      return { updates, stopReason: m.stopReason };
    }
    updates.push(m.update);
  }
}

async function initialize(ctx) {
  const init = await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: {},
    clientInfo,
  });
  assert.equal(init.protocolVersion, 1);
  assert.equal(init.agentInfo?.name, "dshd");
  return init;
}

test("the stable SDK client runs a handshake, a streamed prompt, a cancel, list and load against dshd", { timeout: 60_000 }, async (t) => {
  requireDshd();
  const tree = tempTree(t);
  const prompt = "please stream this prompt back to me in several chunks";
  let sessionId;

  const received = [];
  const first = startDshd(t, tree);
  await recordingClient(received).connectWith(acp.ndJsonStream(first.stream.output, first.stream.input), async (ctx) => {
    const init = await initialize(ctx);
    assert.equal(init.agentCapabilities?.loadSession, true);

    const session = await ctx.buildSession(tree.cwd).start();
    sessionId = session.sessionId;

    const done = session.prompt(prompt);
    const turn = await readTurn(session);
    assert.equal(turn.stopReason, "end_turn");
    assert.equal((await done).stopReason, "end_turn");
    const chunks = turn.updates.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content.text);
    assert.ok(chunks.length >= 2, `want the answer in several chunks, got ${chunks.length}`);
    assert.equal(chunks.join(""), `You said: ${prompt}`);

    // Cancel a turn that would run forever once its first words arrived.
    const hanging = session.prompt("conf-hang");
    for (;;) {
      const m = await session.nextUpdate();
      assert.notEqual(m.kind, "stop", "the hanging turn stopped by itself");
      if (m.update.sessionUpdate === "agent_message_chunk") {
        break;
      }
    }
    await ctx.notify(acp.methods.agent.session.cancel, { sessionId });
    assert.equal((await hanging).stopReason, "cancelled");
    assert.equal((await readTurn(session)).stopReason, "cancelled");

    const next = session.prompt("after the cancel");
    assert.equal(await session.readText(), "You said: after the cancel");
    assert.equal((await next).stopReason, "end_turn");

    const list = await ctx.request(acp.methods.agent.session.list, { cwd: tree.cwd });
    assert.deepEqual(list.sessions.map((s) => s.sessionId), [sessionId]);
    assert.equal(list.sessions[0].cwd, tree.cwd);
    session.dispose();
  });
  assert.equal((await first.stop()).code, 0, first.stderr());
  assert.deepEqual(tally(received), tally(rawUpdates(first.lines)), "the SDK dropped updates dshd sent");

  const replayed = [];
  const second = startDshd(t, tree);
  await recordingClient(replayed).connectWith(acp.ndJsonStream(second.stream.output, second.stream.input), async (ctx) => {
    await initialize(ctx);
    await ctx.request(acp.methods.agent.session.load, { sessionId, cwd: tree.cwd, mcpServers: [] });
    const users = replayed
      .filter((p) => p.sessionId === sessionId && p.update.sessionUpdate === "user_message_chunk")
      .map((p) => p.update.content.text);
    assert.deepEqual(users.filter((u) => u === prompt || u === "after the cancel"), [prompt, "after the cancel"]);
    assert.ok(agentText(replayed, sessionId).includes(`You said: ${prompt}`), "the replay lacks the first answer");

    const session = await ctx.buildSession(tree.cwd).start();
    const done = session.prompt("a fresh session after the load");
    assert.equal(await session.readText(), "You said: a fresh session after the load");
    await done;
    session.dispose();
  });
  assert.equal((await second.stop()).code, 0, second.stderr());
  assert.deepEqual(tally(replayed), tally(rawUpdates(second.lines)), "the SDK dropped replayed updates dshd sent");
});
