/** A research task that fails says in which phase (issue 27 Scope 7): `research failed in <phase>: <why>`. */
export class ResearchPhaseError extends Error {
  readonly phase: string;

  constructor(phase: string, problem: string) {
    super(`research failed in ${phase}: ${problem}`);
    this.name = 'ResearchPhaseError';
    this.phase = phase;
  }
}
