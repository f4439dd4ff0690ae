// Runs `dshd conformance -- node echo-agent.mjs`: the suite against a
// third-party agent written with the official SDK. A minimal agent may
// fail some MUSTs; this test only requires that the suite runs to its end,
// prints the table, and skips (never fails) what the agent does not
// advertise. The table and the failing cases are printed for the record.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { dshdPath, requireDshd } from "./harness.mjs";

const here = fileURLToPath(new URL(".", import.meta.url));
const echoAgent = fileURLToPath(new URL("./echo-agent.mjs", import.meta.url));

test("dshd conformance runs against the SDK echo agent and skips what it does not advertise", { timeout: 180_000 }, () => {
  requireDshd();
  const run = spawnSync(dshdPath, ["conformance", "--details", "--timeout", "10s", "--", process.execPath, echoAgent], {
    cwd: here,
    encoding: "utf8",
    maxBuffer: 64 << 20,
    timeout: 170_000,
  });
  assert.equal(run.error, undefined, String(run.error));
  assert.ok(run.status === 0 || run.status === 1, `dshd conformance exited ${run.status} ${run.signal ?? ""}\n${run.stderr}`);
  const out = run.stdout;
  assert.match(out, /^items: \d+ pass, \d+ fail, \d+ skip, \d+ not covered; cases: \d+ pass, \d+ fail, \d+ skip$/m);

  const rows = new Map();
  for (const line of out.split("\n")) {
    const m = /^((?:acp-v1|subagents)#\d+)\s+(\S+)/.exec(line);
    if (m) {
      rows.set(m[1], m[2]);
    }
  }
  assert.equal(rows.size, 101, "the table lists every checklist item");
  // The echo agent advertises no session capabilities and is not dshd:
  // list, load, resume, close, delete and every subagent check are skipped.
  for (const item of ["acp-v1#29", "acp-v1#31", "acp-v1#32", "acp-v1#33", "acp-v1#34", "acp-v1#35", "acp-v1#36"]) {
    assert.equal(rows.get(item), "skip", `${item} should be skipped for an agent without the capability`);
  }
  for (let i = 1; i <= 25; i++) {
    assert.notEqual(rows.get(`subagents#${i}`), "fail", `subagents#${i} failed for an agent without subagents`);
  }
  const failed = out.split("\n").filter((l) => l.startsWith("FAIL ")).map((l) => l.split(" ").slice(0, 3).join(" "));
  const table = out.slice(0, out.indexOf("\n", out.indexOf("\nitems:") + 1)).trim();
  console.log(`dshd conformance -- node echo-agent.mjs (exit ${run.status}):\n${table}`);
  console.log(`failing cases for the echo agent (a minimal agent may fail these):\n  ${failed.join("\n  ") || "none"}`);
});
