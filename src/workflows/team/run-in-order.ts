import pLimit from 'p-limit';
import type { Deps } from '../../deps.ts';
import { runTaskStep } from '../runtime/task-step.ts';
import type { DependentNode } from './dependency-order.ts';

/** How many agents of a plan or nodes of a template run at once unless the task or plan says otherwise. */
export const DEFAULT_MAX_CONCURRENT_AGENTS = 5;

export interface InOrderRun<N extends DependentNode> {
  /** Every node, each after its dependencies. */
  order: N[];
  concurrency: number;
  /** The durable step's name: stable per node, so a replay finds each node's recorded result. */
  stepName(node: N): string;
}

/**
 * Runs each node as a durable step of its own, in parallel up to the concurrency limit; a node starts when
 * the nodes it depends on have finished, with their results. Every step is started at once, in dependency
 * order, so the engine numbers the steps the same way on every run; inside its step a node first waits for
 * its dependencies, then to be admitted to a free slot. After a crash only the nodes that had not finished run again.
 * Resolves with the results by node id; a step that throws fails the whole run once every step has ended.
 */
export async function runInDependencyOrder<N extends DependentNode, R>(
  deps: Deps, run: InOrderRun<N>, work: (node: N, inputs: R[]) => Promise<R>,
): Promise<Map<string, R>> {
  const slots = pLimit(run.concurrency);
  const running = new Map<string, Promise<R>>();
  for (const node of run.order) {
    const dependencies = node.dependencies.map((id) => running.get(id)!);
    let admit = () => {};
    const admitted = new Promise<void>((resolve) => { admit = resolve; });
    const step = runTaskStep(deps, run.stepName(node), async () => {
      const inputs = await Promise.all(dependencies);
      await admitted;
      return work(node, inputs);
    });
    running.set(node.id, step);
    // Slots are handed out here, in plan order among the nodes whose dependencies are done, rather than in the
    // order the engine happens to start the steps' bodies. A step replayed from its record is never admitted:
    // its slot is held only until its recorded result is back.
    void Promise.allSettled(dependencies).then(() => slots(() => {
      admit();
      return step.catch(() => undefined);
    }));
  }
  const settled = await Promise.allSettled(running.values());
  const failure = settled.find((outcome) => outcome.status === 'rejected');
  if (failure) throw failure.reason;
  const ids = [...running.keys()];
  return new Map(settled.map((outcome, index) => [ids[index], (outcome as PromiseFulfilledResult<R>).value]));
}
