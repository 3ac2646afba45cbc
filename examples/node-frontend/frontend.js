#!/usr/bin/env node
// A minimal agent frontend for tooldex, in plain Node.js (CommonJS, no build
// step). It does what a real frontend does around a model call, one labelled
// line per step:
//
//   manifest:  GetManifest for "anthropic": the tools array to send, the
//              deferred tool names and the prompt-cache fingerprint;
//   prefetch:  Prefetch for the user's message: tools worth loading up front;
//   search:    Search, as the model's ToolSearch call would;
//   execute:   Execute of a found tool, as the model's ExecuteTool call would.
//
// Usage: node frontend.js [host:port]   (default $TOOLDEX_ADDR, then
// localhost:50051). Exits 0 on success, 1 with a one-line error otherwise.
// Credentials, as every tooldex client reads them: TOOLDEX_TOKEN (or
// TOOLDEX_TOKEN_FILE) is sent as "authorization: Bearer <token>" metadata;
// TOOLDEX_CA (a PEM file), or TOOLDEX_TLS=1 for the system roots, turns TLS
// on, with TOOLDEX_CERT and TOOLDEX_KEY as a client certificate and
// TOOLDEX_TLS_SERVER_NAME overriding the name verified.
// GetManifest and Prefetch may be UNIMPLEMENTED on older servers: that is
// printed as "unimplemented" and the loop goes on.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const PROTO_ROOT = path.resolve(__dirname, '..', '..', 'proto');
const CALL_TIMEOUT_MS = 10_000;
// The server's demo host registers its tools just after the server starts
// serving; a frontend started at the same moment retries Search this long.
const SEARCH_WAIT_MS = 10_000;

const SESSION = 'node-demo';
const USER_MESSAGE = 'what time is it in Tokyo right now?';
const SEARCH_QUERY = 'time zone';
// The tools this demo knows how to call, in order of preference, with the
// parameters it calls them with.
const CALLS = [
  ['time_now', { zone: 'Asia/Tokyo' }],
  ['calculate', { expression: '2*(3+4)^2' }],
];

function loadService() {
  // proto-loader resolves google/protobuf/{struct,duration,timestamp}.proto
  // from the definitions protobufjs bundles; only our own protos need a path.
  const def = protoLoader.loadSync('tooldex/v1/discovery.proto', {
    includeDirs: [PROTO_ROOT],
    keepCase: true, // field names as in the .proto: tools_json, session_id, ...
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true, // Content.kind / Value.kind say which field is set
  });
  return grpc.loadPackageDefinition(def).tooldex.v1.DiscoveryService;
}

// toValue and toStruct build google.protobuf.Value / Struct in their wire
// shape, which is what proto-loader expects (it does not map plain JS
// objects to Struct).
function toValue(v) {
  if (v === null || v === undefined) return { nullValue: 'NULL_VALUE' };
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'number') return { numberValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (Array.isArray(v)) return { listValue: { values: v.map(toValue) } };
  if (typeof v === 'object') return { structValue: toStruct(v) };
  throw new TypeError(`cannot put a ${typeof v} in a google.protobuf.Value`);
}

function toStruct(obj) {
  const fields = {};
  for (const [k, v] of Object.entries(obj)) fields[k] = toValue(v);
  return { fields };
}

// fromValue and fromStruct turn them back into plain JS values.
function fromValue(v) {
  if (!v) return null;
  switch (v.kind) {
    case 'stringValue': return v.stringValue;
    case 'numberValue': return v.numberValue;
    case 'boolValue': return v.boolValue;
    case 'structValue': return fromStruct(v.structValue);
    case 'listValue': return (v.listValue.values || []).map(fromValue);
    default: return null;
  }
}

function fromStruct(s) {
  const out = {};
  for (const [k, v] of Object.entries((s && s.fields) || {})) out[k] = fromValue(v);
  return out;
}

// credentials returns the channel credentials, the channel options and the
// metadata sent with every call, from the TOOLDEX_* variables (see the top).
function credentials(env) {
  const read = (f) => fs.readFileSync(f);
  let token = env.TOOLDEX_TOKEN || '';
  if (!token && env.TOOLDEX_TOKEN_FILE) token = read(env.TOOLDEX_TOKEN_FILE).toString().trim();
  const metadata = new grpc.Metadata();
  if (token) metadata.set('authorization', `Bearer ${token}`);
  const tls = env.TOOLDEX_CA || env.TOOLDEX_CERT || env.TOOLDEX_TLS_SERVER_NAME || /^(1|true)$/i.test(env.TOOLDEX_TLS || '');
  const options = {};
  if (env.TOOLDEX_TLS_SERVER_NAME) options['grpc.ssl_target_name_override'] = env.TOOLDEX_TLS_SERVER_NAME;
  const channel = tls
    ? grpc.credentials.createSsl(
        env.TOOLDEX_CA ? read(env.TOOLDEX_CA) : null,
        env.TOOLDEX_KEY ? read(env.TOOLDEX_KEY) : null,
        env.TOOLDEX_CERT ? read(env.TOOLDEX_CERT) : null)
    : grpc.credentials.createInsecure();
  return { channel, options, metadata };
}

// METADATA is sent with every call (the bearer token, if any).
let METADATA = new grpc.Metadata();

// call promisifies one unary RPC with a deadline.
function call(client, method, request) {
  return new Promise((resolve, reject) => {
    const deadline = new Date(Date.now() + CALL_TIMEOUT_MS);
    client[method](request, METADATA, { deadline }, (err, resp) => {
      if (err) {
        err.rpc = method;
        reject(err);
      } else {
        resolve(resp);
      }
    });
  });
}

function isUnimplemented(err) {
  return err && err.code === grpc.status.UNIMPLEMENTED;
}

function scored(results) {
  if (!results || results.length === 0) return '(none)';
  return results.map((r) => `${r.tool.name}=${Number(r.score).toFixed(3)}`).join(' ');
}

// oneLine keeps every step on one labelled line.
function oneLine(s) {
  return String(s).replace(/\s*\n\s*/g, ' ').trim();
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function manifest(client) {
  try {
    const m = await call(client, 'GetManifest', { provider: 'anthropic' });
    const tools = JSON.parse(m.tools_json || '[]');
    console.log(
      `manifest: provider=${m.provider} tools=${tools.length}` +
        ` deferred=${m.deferred_tool_names.length} fingerprint=${m.fingerprint}`,
    );
  } catch (err) {
    if (!isUnimplemented(err)) throw err;
    console.log('manifest: unimplemented');
  }
}

async function prefetch(client) {
  try {
    const p = await call(client, 'Prefetch', { session_id: SESSION, message: USER_MESSAGE });
    console.log(`prefetch: session=${SESSION} recommended: ${scored(p.results)}`);
  } catch (err) {
    if (!isUnimplemented(err)) throw err;
    console.log('prefetch: unimplemented');
  }
}

// search runs the query and picks the first result this demo can call.
async function search(client) {
  const stop = Date.now() + SEARCH_WAIT_MS;
  for (;;) {
    const s = await call(client, 'Search', { query: SEARCH_QUERY, max_results: 10 });
    const names = s.results.map((r) => r.tool.name);
    const pick = CALLS.find(([name]) => names.includes(name));
    if (pick || Date.now() >= stop) {
      console.log(
        `search: query=${JSON.stringify(SEARCH_QUERY)} mode=${s.mode}` +
          ` deferred=${s.total_deferred_tools} results: ${scored(s.results)}`,
      );
      if (pick) return pick;
      // Nothing the query found is callable here: fall back to the first
      // callable tool a select: query finds, as a model would.
      const sel = await call(client, 'Search', { query: 'select:' + CALLS.map(([n]) => n).join(',') });
      const selNames = sel.results.map((r) => r.tool.name);
      const fallback = CALLS.find(([name]) => selNames.includes(name));
      if (!fallback) throw new Error(`search: none of ${CALLS.map(([n]) => n).join(', ')} is registered`);
      return fallback;
    }
    await sleep(250);
  }
}

async function execute(client, [name, params]) {
  const resp = await call(client, 'Execute', {
    tool_name: name,
    params: toStruct(params),
    session_id: SESSION,
  });
  if (resp.approval_required) {
    throw new Error(`execute: ${name} needs approval (rule ${resp.approval_required.rule})`);
  }
  const parts = [];
  for (const c of resp.content) {
    if (c.kind === 'text') parts.push(c.text);
    else if (c.kind === 'json') parts.push(JSON.stringify(fromValue(c.json)));
    else parts.push(`[${c.kind}]`);
  }
  if (parts.length === 0 && resp.structured_content) {
    parts.push(JSON.stringify(fromStruct(resp.structured_content)));
  }
  const text = oneLine(parts.join(' '));
  if (resp.is_error) throw new Error(`execute: ${name} failed: ${text}`);
  console.log(`execute: ${name} ${JSON.stringify(params)} host=${resp.host_id} -> ${text}`);
}

async function main() {
  const addr = process.argv[2] || process.env.TOOLDEX_ADDR || 'localhost:50051';
  const DiscoveryService = loadService();
  const creds = credentials(process.env);
  METADATA = creds.metadata;
  const client = new DiscoveryService(addr, creds.channel, creds.options);
  try {
    console.log(`connect: ${addr}`);
    await manifest(client);
    await prefetch(client);
    const pick = await search(client);
    await execute(client, pick);
  } finally {
    client.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    const what = err.rpc ? `${err.rpc}: ${grpc.status[err.code] || err.code}: ${err.details}` : err.message;
    console.error(`error: ${oneLine(what)}`);
    process.exit(1);
  },
);
