#!/usr/bin/env node
// A minimal ACP agent built on the official TypeScript SDK's agent side
// (the echo agent of echo.mjs) on stdio: it echoes the prompt's text back
// as agent_message_chunk updates and honours session/cancel.
// The benchmark uses it as a baseline and the acp subagent provider's tests
// as a third-party child agent.
//
//   node echo-agent.mjs            serve ACP on stdio
//   ECHO_CHUNK=8 node echo-agent.mjs   echo in pieces of 8 characters
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { echoAgent } from "./echo.mjs";

const chunkSize = Number(process.env.ECHO_CHUNK ?? 64) || 64;

// chunks cuts text in pieces of chunkSize characters.
function* chunks(text) {
  for (let i = 0; i < text.length; i += chunkSize) {
    yield text.slice(i, i + chunkSize);
  }
}

const app = echoAgent({ name: "echo-agent", idPrefix: "echo", pieces: chunks });
const connection = app.connect(
  acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)),
);
await connection.closed;
