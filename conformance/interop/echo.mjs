// The echo agent both interop agents serve (echo-agent.mjs on stdio,
// remote-agent.mjs on ACP's remote transport), on the official TypeScript
// SDK's agent side: it answers initialize, session/new and session/prompt
// (sending the prompt's text back as agent_message_chunk updates, in the
// pieces its caller cuts) and honours session/cancel between two pieces.
import { randomUUID } from "node:crypto";
import * as acp from "@agentclientprotocol/sdk";

// echoAgent returns the agent named name; its session ids start with
// idPrefix and pieces(text) cuts the text it echoes into updates.
export function echoAgent({ name, idPrefix, pieces }) {
  const sessions = new Map(); // sessionId → { cancelled: boolean }
  return acp
    .agent({ name })
    .onRequest(acp.methods.agent.initialize, () => ({
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: {},
      agentInfo: { name, version: "1.0.0" },
      authMethods: [],
    }))
    .onRequest(acp.methods.agent.session.new, () => {
      const sessionId = `${idPrefix}-${randomUUID()}`;
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
      for (const piece of pieces(text)) {
        if (state.cancelled) {
          return { stopReason: "cancelled" };
        }
        await client.notify(acp.methods.client.session.update, {
          sessionId: params.sessionId,
          update: {
            sessionUpdate: "agent_message_chunk",
            messageId,
            content: { type: "text", text: piece },
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
}
