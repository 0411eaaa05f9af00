import { readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import type { HostJob, HostMessage, HostOptions } from './sandbox-protocol.ts';
import { JS_HEAP_LIMIT_MB, runOnThread, startSandboxThread } from './sandbox-thread.ts';

/**
 * A sandbox process (started by sandbox-process.ts, with no environment): it loads one sealed sandbox thread,
 * says `ready`, runs the one job the gateway sends, reports `done`, and is then killed. However a program's
 * memory grows, it grows here: the worst it can do is end this process, never the gateway.
 */
const { memoryLimitMb } = JSON.parse(process.argv[2]) as HostOptions;
const MB = 1024 * 1024;
/**
 * A program still running after this drops to the lowest CPU priority: a short program (most of an agent's)
 * keeps the CPU that long-running ones compete for, whichever tenant runs them.
 */
const DEMOTE_AFTER_MS = 1000;

yieldToTheGateway();
// The gateway is gone (it exited, or was killed): there is nobody left to report to.
process.on('disconnect', () => process.exit(0));
try {
  const worker = await startSandboxThread(memoryLimitMb);
  // What the thread's own limits allow (WebAssembly memory and JavaScript heap) beyond what a loaded sandbox holds.
  const memoryBudgetBytes = process.memoryUsage.rss() + (memoryLimitMb + JS_HEAP_LIMIT_MB) * MB;
  process.once('message', async (job: HostJob) => {
    setTimeout(() => setPriorityOfThreads(os.constants.priority.PRIORITY_LOW), DEMOTE_AFTER_MS).unref();
    send({ type: 'done', run: await runOnThread(worker, job.program, job.timeoutMs, memoryBudgetBytes) });
  });
  send({ type: 'ready' });
} catch (error) {
  send({ type: 'failed', reason: (error as Error).message });
}

function send(message: HostMessage): void {
  // Without a callback, a message to a gateway already gone would be an 'error' event, and this process would crash.
  process.send!(message, undefined, {}, () => {});
}

/**
 * Below the gateway's CPU priority, for every thread (Linux sets it per thread; threads started later inherit
 * their creator's): a sandbox gets a ninth of the CPU the gateway gets when they compete, so a spinning program
 * never starves the event loop. Loading and short programs are not at the lowest priority: there they would
 * hardly progress on a host where other work of normal priority runs (measured: a trivial call took twice as
 * long); long programs are (DEMOTE_AFTER_MS). And when memory runs out, the kernel's OOM killer picks a sandbox
 * rather than the gateway. Where the system refuses, the process runs as it is.
 */
function yieldToTheGateway(): void {
  setPriorityOfThreads(os.constants.priority.PRIORITY_BELOW_NORMAL);
  try { writeFileSync('/proc/self/oom_score_adj', '1000'); } catch { /* not Linux */ }
}

function setPriorityOfThreads(priority: number): void {
  for (const thread of threadsOfThisProcess()) {
    try { os.setPriority(thread, priority); } catch { /* a thread that already ended */ }
  }
}

function threadsOfThisProcess(): number[] {
  try {
    return readdirSync('/proc/self/task').map(Number);
  } catch {
    return [0];
  }
}
