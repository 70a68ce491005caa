// fauxqs's own CLI (dist/cli.js) listens on 0.0.0.0 whatever the environment says: FAUXQS_HOST
// only names the host in the queue URLs it hands out. This starts the same server (buildApp, the
// package's export, with the CLI's settings) on the address given as the first argument.
// infra/localstack runs it with node --input-type=module -e from the directory holding
// node_modules, so that "fauxqs" resolves to the pinned install.
import { buildApp } from "fauxqs";

const host = process.argv[1];
if (!host) {
  throw new Error("usage: node --input-type=module -e <this> <listen address>");
}
const app = buildApp({ logger: true, host: process.env.FAUXQS_HOST, defaultRegion: process.env.FAUXQS_DEFAULT_REGION });
await app.listen({ host, port: Number(process.env.FAUXQS_PORT) });
