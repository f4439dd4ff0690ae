#!/usr/bin/env node
// A minimal ACP agent built on the official TypeScript SDK's agent side: it
// answers initialize, session/new and session/prompt (echoing the prompt's
// text back as agent_message_chunk updates) and honours session/cancel.
// The benchmark uses it as a baseline and the acp subagent provider's tests
// as a third-party child agent.
//
//   node echo-agent.mjs            serve ACP on stdio
//   ECHO_CHUNK=8 node echo-agent.mjs   echo in pieces of 8 characters
import { Readable, Writable } from "node:stream";
import { randomUUID } from "node:crypto";
import * as acp from "@agentclientprotocol/sdk";

const chunkSize = Number(process.env.ECHO_CHUNK ?? 64) || 64;
const sessions = new Map(); // sessionId → { cancelled: boolean }

const app = acp
  .agent({ name: "echo-agent" })
  .onRequest(acp.methods.agent.initialize, () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: {},
    agentInfo: { name: "echo-agent", version: "1.0.0" },
    authMethods: [],
  }))
  .onRequest(acp.methods.agent.session.new, () => {
    const sessionId = `echo-${randomUUID()}`;
    sessions.set(sessionId, { cancelled: false });
    return { sessionId };
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    const state = sessions.get(params.sessionId);
    if (!state) {
      throw acp.RequestError.resourceNotFound(params.sessionId);
    }
    state.cancelled = false;
    const text = params.prompt
      .filter((block) => block.type === "text")
      .map((block) => block.text)
      .join("");
    const messageId = randomUUID();
    for (let i = 0; i < text.length; i += chunkSize) {
      if (state.cancelled) {
        return { stopReason: "cancelled" };
      }
      await client.notify(acp.methods.client.session.update, {
        sessionId: params.sessionId,
        update: {
          sessionUpdate: "agent_message_chunk",
          messageId,
          content: { type: "text", text: text.slice(i, i + chunkSize) },
        },
      });
    }
    return { stopReason: state.cancelled ? "cancelled" : "end_turn" };
  })
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    const state = sessions.get(params.sessionId);
    if (state) {
      state.cancelled = true;
    }
  });

const connection = app.connect(
  acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)),
);
await connection.closed;
