// Shared helpers of the interop tests: start bin/dshd on stdio with the
// conformance script and a private state directory, and connect the
// official SDK's client to it through a tap that records every raw line
// dshd wrote, so a test can compare what dshd sent with what the SDK
// delivered (the SDK drops a session/update it cannot parse, silently).
import { spawn } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync, mkdirSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";

export const dshdPath = fileURLToPath(new URL("../../bin/dshd", import.meta.url));
export const scriptPath = fileURLToPath(new URL("../testdata/scripts/conformance.json", import.meta.url));

/** Makes a temporary directory tree for one test: work (session cwd) and state. */
export function tempTree(t) {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "acp-interop-")));
  const cwd = join(root, "work");
  mkdirSync(cwd);
  t.after(() => rmSync(root, { recursive: true, force: true }));
  return { root, cwd, state: join(root, "state") };
}

export function requireDshd() {
  if (!existsSync(dshdPath)) {
    throw new Error(`${dshdPath} is missing: run make build first`);
  }
}

/**
 * Starts dshd and returns its web streams plus a tap of its stdout lines.
 * The tap keeps every parsed line in `lines` in arrival order. The process
 * is killed when the test ends, whatever happened.
 */
export function startDshd(t, tree, extraArgs = []) {
  const child = spawn(
    dshdPath,
    ["--model", `scripted:${scriptPath}`, "--state-dir", tree.state, ...extraArgs],
    {
      cwd: tree.root,
      env: { ...process.env, XDG_CONFIG_HOME: join(tree.root, "config") },
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
  t.after(() => child.kill("SIGKILL"));
  let stderr = "";
  child.stderr.on("data", (b) => {
    stderr += b;
  });
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  const [forSdk, forTap] = Readable.toWeb(child.stdout).tee();
  const lines = [];
  const tapDone = (async () => {
    const decoder = new TextDecoder();
    let buf = "";
    for await (const chunk of forTap) {
      buf += decoder.decode(chunk, { stream: true });
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.trim() !== "") {
          lines.push(JSON.parse(line));
        }
      }
    }
  })();
  return {
    child,
    lines,
    stream: { output: Writable.toWeb(child.stdin), input: forSdk },
    stderr: () => stderr,
    /** Ends dshd by closing its stdin and waits for the exit and the tap. */
    async stop() {
      child.stdin.end();
      const status = await exited;
      await tapDone;
      return status;
    },
  };
}

/** The raw session/update params dshd sent, optionally filtered. */
export function rawUpdates(lines, filter = () => true) {
  return lines.filter((m) => m.method === "session/update" && filter(m.params)).map((m) => m.params);
}

/** A stable key for comparing notifications. */
export function key(params) {
  return `${params.sessionId} ${params.update?.sessionUpdate}`;
}

/** Counts keys. */
export function tally(list) {
  const out = {};
  for (const p of list) {
    const k = key(p);
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

/** Concatenated agent_message_chunk text of a list of updates. */
export function agentText(updates, sessionId) {
  return updates
    .filter((p) => p.sessionId === sessionId && p.update.sessionUpdate === "agent_message_chunk" && p.update.content?.type === "text")
    .map((p) => p.update.content.text)
    .join("");
}
