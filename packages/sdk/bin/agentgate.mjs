#!/usr/bin/env node
// The `agentgate` command. In the agentgate repository it runs the TypeScript source (Node 22.18+ and 24 run it
// as is), so a stale dist/ is never what runs there; an installed package has no source and runs its dist/.
import { existsSync } from 'node:fs';

const source = new URL('../src/cli/main.ts', import.meta.url);
const compiled = new URL('../dist/cli/main.js', import.meta.url);
const runsSource = existsSync(source) && (process.features.typescript || !existsSync(compiled));
if (runsSource && !process.features.typescript) {
  console.error(`agentgate: running from source needs Node 22.18 or later (this is ${process.version}); in the agentgate repository use \`npx agentgate\`, which runs its Node 24`);
  process.exit(2);
}
const { main } = await import((runsSource ? source : compiled).href);
process.exitCode = await main(process.argv);
