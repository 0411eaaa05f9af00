#!/usr/bin/env node
// The `agentgate` command. An installed package runs its compiled dist/; in the agentgate repository (no dist/)
// it runs the TypeScript source, which Node 22.18+ and 24 run as is.
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(compiled) && !process.features.typescript) {
  console.error(`agentgate: running from source needs Node 22.18 or later (this is ${process.version}); in the agentgate repository use \`npx agentgate\`, which runs its Node 24`);
  process.exit(2);
}
const entry = existsSync(compiled) ? compiled : new URL('../src/cli/main.ts', import.meta.url);
const { main } = await import(entry.href);
process.exitCode = await main(process.argv);
