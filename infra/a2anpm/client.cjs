// The A2A tour the tests run with the official JavaScript client (@a2a-js/sdk, pinned in npm/):
// it reads {base, key, agent, toolAgent} on stdin, and prints what each call answered as JSON:
// the card, message/send, message/stream (every event) in the same context, tasks/get, a
// tasks/cancel of a completed task (its error), an input-required round trip (the paused task,
// the task its data-part answer completed), a tasks/cancel of a paused task, and with pushUrl a
// push config set on the finished task (which pushes it there), listed, and deleted.
const { randomUUID } = require("node:crypto");
const { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, DefaultAgentCardResolver } = require("@a2a-js/sdk/client");

let input = "";
process.stdin.on("data", (c) => (input += c));
process.stdin.on("end", () => {
  tour(JSON.parse(input)).then(
    (out) => process.stdout.write(JSON.stringify(out)),
    (e) => {
      process.stderr.write(String((e && e.stack) || e));
      process.exit(1);
    },
  );
});

async function tour({ base, key, agent, toolAgent, pushUrl }) {
  // The card's security scheme: the API key as a bearer token, on every request.
  const fetchImpl = (url, init = {}) => {
    const headers = new Headers(init.headers || {});
    headers.set("Authorization", "Bearer " + key);
    return fetch(url, { ...init, headers });
  };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    }),
  );
  const connect = (agentKey) => factory.createFromUrl(`${base}/api/v1/a2a/${agentKey}/.well-known/agent-card.json`, "");
  const message = (parts, extra = {}) => ({ message: { kind: "message", messageId: randomUUID(), role: "user", parts, ...extra } });
  const text = (t) => [{ kind: "text", text: t }];

  const out = {};
  const client = await connect(agent);
  out.card = await client.getAgentCard();
  out.send = await client.sendMessage(message(text("What is the refund policy?")));
  out.events = [];
  for await (const ev of client.sendMessageStream(message(text("Tell me about returns"), { contextId: out.send.contextId }))) {
    out.events.push(ev);
  }
  out.get = await client.getTask({ id: out.send.id });
  try {
    await client.cancelTask({ id: out.send.id });
    out.cancelCompleted = "no error";
  } catch (e) {
    out.cancelCompleted = `${e.constructor.name}: ${e.message}`;
  }

  const tools = await connect(toolAgent);
  out.paused = await tools.sendMessage(message(text('lookup {"word":"otter"}')));
  const call = out.paused.status.message.parts.find((p) => p.kind === "data").data.required_action.tool_calls[0];
  const answer = { tool_results: [{ tool_call_id: call.id, output: "an otter is a mammal" }] };
  out.resumed = await tools.sendMessage(message([{ kind: "data", data: answer }], { taskId: out.paused.id, contextId: out.paused.contextId }));
  const again = await tools.sendMessage(message(text('lookup {"word":"seal"}')));
  out.cancelled = await tools.cancelTask({ id: again.id });
  if (pushUrl) {
    const taskId = out.send.id;
    out.pushSet = await client.setTaskPushNotificationConfig({ taskId, pushNotificationConfig: { id: "js", url: pushUrl, token: "js-token" } });
    out.pushList = await client.listTaskPushNotificationConfig({ id: taskId });
    await client.deleteTaskPushNotificationConfig({ id: taskId, pushNotificationConfigId: "js" });
    out.pushListAfterDelete = await client.listTaskPushNotificationConfig({ id: taskId });
  }
  return out;
}
