/** A research task that fails says in which phase (issue 27 Scope 7): `research failed in <phase>: <why>`. */
export class ResearchPhaseError extends Error {
  readonly phase: string;

  constructor(phase: string, problem: string) {
    super(`research failed in ${phase}: ${problem}`);
    this.name = 'ResearchPhaseError';
    this.phase = phase;
  }

  /** Also true for one recovered from a step's record, a plain Error of the same name (runtime/control-errors.ts). */
  static isInstance(error: unknown): error is Error {
    return error instanceof Error && error.name === 'ResearchPhaseError';
  }
}
