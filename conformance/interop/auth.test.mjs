// Terminal auth through the official SDK's stable client: a client that
// says it can run dshd in a terminal (auth.terminal) is offered `dshd auth`
// as a terminal method that the SDK's schema accepts; running it the way a
// client must (dshd's own command line plus the method's args and env)
// stores the key, and session/new then works on the same connection. A
// client that did not say so never sees the method.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { dshdPath, requireDshd, scriptPath, startDshd, tempTree } from "./harness.mjs";

const zod = await import(new URL("./node_modules/@agentclientprotocol/sdk/dist/v1/schema/zod.gen.js", import.meta.url));

// A backend that needs a key, from a variable nobody sets; its server is
// never reached (session/new needs only the key, and `dshd auth` stores a
// key it could not check).
const needsKey = ["--model", "m", "--backend", "openai", "--model-url", "http://127.0.0.1:9/v1", "--api-key-env", "DSHD_INTEROP_UNSET_KEY"];

async function initialize(ctx, clientCapabilities) {
  const res = await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities,
    clientInfo: { name: "dshd-interop-auth", version: "1.0.0" },
  });
  const r = zod.zInitializeResponse.safeParse(res);
  assert.ok(r.success, `the initialize result does not parse with the stable schema: ${JSON.stringify(res)}\n${r.error}`);
  return res;
}

/** Runs a terminal auth method as a client must, feeding the key on stdin. */
function runTerminalMethod(tree, method, key) {
  const args = ["--model", `scripted:${scriptPath}`, "--state-dir", tree.state, ...needsKey, ...(method.args ?? [])];
  const child = spawn(dshdPath, args, {
    cwd: tree.root,
    env: { ...process.env, XDG_CONFIG_HOME: join(tree.root, "config"), ...(method.env ?? {}) },
    stdio: ["pipe", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (b) => {
    stderr += b;
  });
  child.stdin.end(key + "\n");
  return new Promise((resolve) => child.on("exit", (code) => resolve({ code, stderr })));
}

test("a client with auth.terminal gets dshd auth as a valid terminal method, and after it session/new works", { timeout: 60_000 }, async (t) => {
  requireDshd();
  const tree = tempTree(t);
  const dshd = startDshd(t, tree, needsKey);
  await acp.client({ name: "dshd-interop-auth" }).connectWith(acp.ndJsonStream(dshd.stream.output, dshd.stream.input), async (ctx) => {
    const init = await initialize(ctx, { auth: { terminal: true } });
    const terminal = init.authMethods.filter((m) => m.type === "terminal");
    assert.equal(terminal.length, 1, `want one terminal method: ${JSON.stringify(init.authMethods)}`);
    assert.ok(zod.zAuthMethodTerminal.safeParse(terminal[0]).success, JSON.stringify(terminal[0]));
    assert.deepEqual(terminal[0].args, ["auth"]);
    assert.match(terminal[0].description, /DSHD_INTEROP_UNSET_KEY/);

    await assert.rejects(
      ctx.request(acp.methods.agent.session.new, { cwd: tree.cwd, mcpServers: [] }),
      (err) => err.code === -32000,
      "session/new without a key is auth_required",
    );

    const login = await runTerminalMethod(tree, terminal[0], "sk-interop");
    assert.equal(login.code, 0, login.stderr);

    // The client would reconnect and initialize again; on this connection
    // it works as well.
    await initialize(ctx, { auth: { terminal: true } });
    const created = await ctx.request(acp.methods.agent.session.new, { cwd: tree.cwd, mcpServers: [] });
    assert.ok(created.sessionId, "no session after dshd auth stored the key");
  });
  assert.equal((await dshd.stop()).code, 0, dshd.stderr());
});

for (const [name, caps] of [
  ["no capabilities", {}],
  ["auth.terminal false", { auth: { terminal: false } }],
  ["only the legacy _meta flag", { _meta: { "terminal-auth": true } }],
]) {
  test(`a client with ${name} sees no terminal method, but an auth method`, { timeout: 60_000 }, async (t) => {
    requireDshd();
    const tree = tempTree(t);
    const dshd = startDshd(t, tree, needsKey);
    await acp.client({ name: "dshd-interop-auth" }).connectWith(acp.ndJsonStream(dshd.stream.output, dshd.stream.input), async (ctx) => {
      const init = await initialize(ctx, caps);
      assert.deepEqual(init.authMethods.filter((m) => m.type === "terminal"), [], JSON.stringify(init.authMethods));
      assert.ok(init.authMethods.some((m) => m.id === "api-key"), "no auth method for a daemon without a key");
    });
    assert.equal((await dshd.stop()).code, 0, dshd.stderr());
  });
}
