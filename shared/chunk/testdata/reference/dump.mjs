// dump.mjs runs LangChain.js's RecursiveCharacterTextSplitter (@langchain/textsplitters, pinned
// by package-lock.json) on the cases shared/chunk's tests send, so that they can require the very
// same chunks. One process answers every case.
//
// stdin, one line of JSON:
//   {"texts": [string…],
//    "cases": [{"text": i, "chunk_size": n, "chunk_overlap": n,
//               "separators": [string…] | null (LangChain's default), "split_by": "char" | "word"}…]}
// stdout: {"chunks": [[string…]…], "node": "v20…"}
//
// For a benchmark the request has "bench": {"text": i, "chunk_size": n, …} instead of cases: the
// script warms the splitter up, answers "ready", then for each further line "n" splits the text n
// times and answers "done", so that the Go benchmark times the splitting and nothing else.
//
// split_by "word" gives the splitter shared/chunk's word length: the number of maximal runs of
// characters outside JS's \s (the set trim() strips), i.e. (text.match(/\S+/g) ?? []).length.
import { createInterface } from "node:readline";
import { RecursiveCharacterTextSplitter } from "@langchain/textsplitters";

const words = (t) => (t.match(/\S+/g) ?? []).length;

function splitter(c) {
  const fields = { chunkSize: c.chunk_size, chunkOverlap: c.chunk_overlap };
  if (c.separators != null) fields.separators = c.separators;
  if (c.split_by === "word") fields.lengthFunction = words;
  return new RecursiveCharacterTextSplitter(fields);
}

// mergeSplits warns on stderr about chunks over the size; the tests read stdout only.
console.warn = () => {};

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity })[Symbol.asyncIterator]();
const req = JSON.parse((await lines.next()).value);
if (req.bench) {
  const s = splitter(req.bench);
  const text = req.texts[req.bench.text];
  for (let i = 0; i < 5; i++) await s.splitText(text); // warm the JIT
  process.stdout.write("ready\n");
  for await (const line of lines) {
    for (let i = 0; i < Number(line); i++) await s.splitText(text);
    process.stdout.write("done\n");
  }
} else {
  const out = { chunks: [], node: process.version };
  for (const c of req.cases ?? []) {
    out.chunks.push(await splitter(c).splitText(req.texts[c.text]));
  }
  process.stdout.write(JSON.stringify(out));
}
