// The process's entry: `serve`, `migrate` and the key commands live in commands.ts. Node's compile cache is turned on
// before they load, so a restart reuses the compiled code of the server's modules instead of compiling them again
// (a third of its start-up CPU; see docs/decisions.md).
import { enableCompileCache } from 'node:module';

enableCompileCache();
await import('./commands.ts');
