// The official OpenAI client for Node against /api/v1/openai/v1 (infra/openainpm.Run): a plain
// completion, a streamed one (raw chunks, and the SDK's stream helper, which checks them), a tool
// round trip, the Responses API streamed, an unknown model, a bad key and the models list. It
// prints one JSON object with what each returned; the Go test judges it.
import OpenAI from 'openai';

const env = process.env;
const client = new OpenAI({ baseURL: env.OPENAI_BASE_URL, apiKey: env.OPENAI_API_KEY, maxRetries: 0 });
const model = env.OPENAI_MODEL;
const toolModel = env.OPENAI_TOOL_MODEL;
const out = {};

const plain = await client.chat.completions.create({
  model,
  messages: [{ role: 'user', content: 'Hello' }, { role: 'assistant', content: 'Hi.' }, { role: 'user', content: 'Plain from node' }],
});
out.plain = { object: plain.object, content: plain.choices[0].message.content, finish: plain.choices[0].finish_reason };

const stream = await client.chat.completions.create({
  model, messages: [{ role: 'user', content: 'Streamed from node' }], stream: true, stream_options: { include_usage: true },
});
let text = '', finish = null, chunks = 0, total = null;
for await (const chunk of stream) {
  chunks++;
  if (chunk.object !== 'chat.completion.chunk') throw new Error('chunk object ' + chunk.object);
  const choice = chunk.choices[0];
  if (choice) {
    text += choice.delta?.content ?? '';
    finish = choice.finish_reason ?? finish;
  }
  if (chunk.usage) total = chunk.usage.total_tokens;
}
out.stream = { text, finish, chunks, total };

const helper = client.chat.completions.stream({ model, messages: [{ role: 'user', content: 'Helper from node' }] });
const final = await helper.finalChatCompletion();
out.helper = { content: final.choices[0].message.content, finish: final.choices[0].finish_reason };

const tools = [{ type: 'function', function: { name: 'lookup', description: 'Look a word up', parameters: { type: 'object', properties: { word: { type: 'string' } } } } }];
const messages = [{ role: 'user', content: 'lookup {"word":"otter"}' }];
const asked = await client.chat.completions.create({ model: toolModel, messages, tools });
const call = asked.choices[0].message.tool_calls?.[0];
messages.push(asked.choices[0].message);
messages.push({ role: 'tool', tool_call_id: call.id, content: 'an ' + JSON.parse(call.function.arguments).word + ' is a mammal' });
const answered = await client.chat.completions.create({ model: toolModel, messages, tools });
out.tools = { finish: asked.choices[0].finish_reason, name: call.function.name, content: answered.choices[0].message.content };

const rs = await client.responses.create({ model, input: 'Responses from node', stream: true });
const types = [];
let rtext = '';
for await (const ev of rs) {
  types.push(ev.type);
  if (ev.type === 'response.output_text.delta') rtext += ev.delta;
}
out.responses = { text: rtext, first: types[0], last: types[types.length - 1] };

const refusal = async (c, params) => {
  try {
    await c.chat.completions.create(params);
    return null;
  } catch (e) {
    return { class: e.constructor.name, status: e.status, type: e.type ?? null, code: e.code ?? null, param: e.param ?? null };
  }
};
out.unknownModel = await refusal(client, { model: 'no-such-agent', messages: [{ role: 'user', content: 'hi' }] });
const bad = new OpenAI({ baseURL: env.OPENAI_BASE_URL, apiKey: 'ak_not_a_key', maxRetries: 0 });
out.badKey = await refusal(bad, { model, messages: [{ role: 'user', content: 'hi' }] });

out.models = [];
for await (const m of client.models.list()) out.models.push(m.id);

console.log(JSON.stringify(out));
