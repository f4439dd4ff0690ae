#!/usr/bin/env node
// The official TypeScript SDK's experimental server (AcpServer, with its
// Node adapters) hosting the echo agent of echo.mjs on ACP's remote transport: /acp
// takes WebSocket upgrades and Streamable HTTP. dshd's acp provider dials
// it over ws:// and http:// in its tests. It prints "listening URL" once
// it accepts connections.
//
//   node remote-agent.mjs            listen on 127.0.0.1, a free port
import { createServer } from "node:http";
import { WebSocketServer } from "ws";
import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import { createNodeHttpHandler, createNodeWebSocketUpgradeHandler } from "@agentclientprotocol/sdk/experimental/node";
import { echoAgent } from "./echo.mjs";

const app = echoAgent({ name: "remote-echo-agent", idPrefix: "remote", pieces: (text) => ["echo: ", text] });

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
