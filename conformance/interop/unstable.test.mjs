// The unstable features dshd implements on purpose (acp-v1 §25), through
// the SDK's /unstable client: sessionCapabilities.fork and session/fork,
// and the turn's usage on the prompt response. Each answer is parsed with
// the SDK's own unstable zod schema; a forked session and its source are
// prompted apart and loaded again in a second dshd, each with its own
// history.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { rawUpdates, requireDshd, startDshd, tally, tempTree } from "./harness.mjs";

const zod = await import(new URL("./node_modules/@agentclientprotocol/sdk/dist/v1/unstable/schema/zod.gen.js", import.meta.url));

function parsed(schema, value, what) {
  const r = schema.safeParse(value);
  assert.ok(r.success, `${what} does not parse with the unstable schema: ${JSON.stringify(value)}\n${r.error}`);
  return r.data;
}

async function initialize(ctx) {
  const init = await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: {},
    clientInfo: { name: "dshd-interop-unstable", version: "1.0.0" },
  });
  return parsed(zod.zInitializeResponse, init, "the initialize result");
}

async function prompt(ctx, sessionId, text) {
  const res = await ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
  assert.equal(res.stopReason, "end_turn");
  return parsed(zod.zPromptResponse, res, "the prompt response");
}

/** The user prompts a session/load replays, in order. */
function userPrompts(received, sessionId) {
  return received
    .filter((p) => p.sessionId === sessionId && p.update.sessionUpdate === "user_message_chunk")
    .map((p) => p.update.content.text);
}

test("session/fork and prompt usage, as the SDK's unstable schema shapes them", { timeout: 60_000 }, async (t) => {
  requireDshd();
  const tree = tempTree(t);
  let source, fork;

  const first = startDshd(t, tree);
  const received = [];
  const app = acp.client({ name: "dshd-interop-unstable" }).onNotification(acp.methods.client.session.update, ({ params }) => {
    received.push(params);
  });
  await app.connectWith(acp.ndJsonStream(first.stream.output, first.stream.input), async (ctx) => {
    const init = await initialize(ctx);
    assert.deepEqual(init.agentCapabilities?.sessionCapabilities?.fork, {}, "sessionCapabilities.fork is not advertised as {}");

    source = (await ctx.request(acp.methods.agent.session.new, { cwd: tree.cwd, mcpServers: [] })).sessionId;
    const res = await prompt(ctx, source, "the shared start");
    assert.ok(res.usage, "no usage on the prompt response");
    for (const k of ["totalTokens", "inputTokens", "outputTokens"]) {
      assert.ok(Number.isInteger(res.usage[k]) && res.usage[k] > 0, `usage.${k} is ${res.usage[k]}`);
    }
    assert.equal(res.usage.totalTokens, res.usage.inputTokens + res.usage.outputTokens);

    const forked = parsed(zod.zForkSessionResponse, await ctx.request(acp.methods.agent.session.fork, { sessionId: source, cwd: tree.cwd, mcpServers: [] }), "the session/fork result");
    fork = forked.sessionId;
    assert.ok(fork && fork !== source, `session/fork returned ${fork}`);
    assert.ok(forked.modes && forked.configOptions?.length > 0, "the fork has no modes or config options");

    await prompt(ctx, fork, "only the fork");
    await prompt(ctx, source, "only the source");
  });
  assert.equal((await first.stop()).code, 0, first.stderr());
  assert.deepEqual(tally(received), tally(rawUpdates(first.lines)), "the SDK dropped updates dshd sent");
  for (const p of rawUpdates(first.lines)) {
    parsed(zod.zSessionNotification, p, "an update");
  }

  const replayed = [];
  const second = startDshd(t, tree);
  const app2 = acp.client({ name: "dshd-interop-unstable" }).onNotification(acp.methods.client.session.update, ({ params }) => {
    replayed.push(params);
  });
  await app2.connectWith(acp.ndJsonStream(second.stream.output, second.stream.input), async (ctx) => {
    await initialize(ctx);
    await ctx.request(acp.methods.agent.session.load, { sessionId: fork, cwd: tree.cwd, mcpServers: [] });
    await ctx.request(acp.methods.agent.session.load, { sessionId: source, cwd: tree.cwd, mcpServers: [] });
    await prompt(ctx, fork, "the fork goes on");
  });
  assert.equal((await second.stop()).code, 0, second.stderr());
  assert.deepEqual(userPrompts(replayed, fork), ["the shared start", "only the fork"]);
  assert.deepEqual(userPrompts(replayed, source), ["the shared start", "only the source"]);
});
