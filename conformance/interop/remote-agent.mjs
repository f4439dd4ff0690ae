#!/usr/bin/env node
// The official TypeScript SDK's experimental server (AcpServer, with its
// Node adapters) hosting an echo agent on ACP's remote transport: /acp
// takes WebSocket upgrades and Streamable HTTP. dshd's acp provider dials
// it over ws:// and http:// in its tests. It prints "listening URL" once
// it accepts connections.
//
//   node remote-agent.mjs            listen on 127.0.0.1, a free port
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import { WebSocketServer } from "ws";
import * as acp from "@agentclientprotocol/sdk";
import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } from "@agentclientprotocol/sdk/experimental/node";

const sessions = new Set();
const app = acp
  .agent({ name: "remote-echo-agent" })
  .onRequest(acp.methods.agent.initialize, () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: {},
    agentInfo: { name: "remote-echo-agent", version: "1.0.0" },
    authMethods: [],
  }))
  .onRequest(acp.methods.agent.session.new, () => {
    const sessionId = `remote-${randomUUID()}`;
    sessions.add(sessionId);
    return { sessionId };
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    if (!sessions.has(params.sessionId)) {
      throw acp.RequestError.resourceNotFound(params.sessionId);
    }
    const text = params.prompt.filter((b) => b.type === "text").map((b) => b.text).join("");
    const messageId = randomUUID();
    for (const piece of ["echo: ", text]) {
      await client.notify(acp.methods.client.session.update, {
        sessionId: params.sessionId,
        update: { sessionUpdate: "agent_message_chunk", messageId, content: { type: "text", text: piece } },
      });
    }
    return { stopReason: "end_turn" };
  })
  .onNotification(acp.methods.agent.session.cancel, () => {});

const server = new AcpServer({ agent: app });
const httpHandler = createNodeHttpHandler(server);
const wss = new WebSocketServer({ noServer: true });
const upgrade = createNodeWebSocketUpgradeHandler(server, wss);
const http = createServer((req, res) => {
  if (new URL(req.url, "http://x").pathname !== "/acp") {
    res.writeHead(404).end();
    return;
  }
  httpHandler(req, res);
});
http.on("upgrade", (req, socket, head) => upgrade(req, socket, head));
http.listen(0, "127.0.0.1", () => {
  console.log(`listening http://127.0.0.1:${http.address().port}/acp`);
});
const stop = () => {
  void server.close();
  http.close();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
